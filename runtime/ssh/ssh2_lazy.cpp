// libssh2, loaded when a run first opens an ssh session (runtime/base/lazy_library.hpp: linking
// it, and through it OpenSSL's libcrypto, cost every start of runara about 1.5 ms). Each function
// below is one runara calls; its first call opens libssh2.so.1 and it forwards from then on.
// The definitions must match libssh2.h's declarations exactly (a mismatch is a compile error:
// two C functions of one name), and calling a libssh2 function not listed here fails at link time.
#include <libssh2.h>
#include <libssh2_sftp.h>

#include "base/lazy_library.hpp"

namespace {

void* libssh2() {
  static void* const lib = runara::open_library("libssh2.so.1", "libssh2-1");
  return lib;
}

}  // namespace

#define RUNARA_SSH2_REAL(name) RUNARA_LAZY_REAL(libssh2, "libssh2.so.1", name)

extern "C" {

int libssh2_agent_connect(LIBSSH2_AGENT *agent) {
  RUNARA_SSH2_REAL(libssh2_agent_connect);
  return fn(agent);
}

int libssh2_agent_disconnect(LIBSSH2_AGENT *agent) {
  RUNARA_SSH2_REAL(libssh2_agent_disconnect);
  return fn(agent);
}

void libssh2_agent_free(LIBSSH2_AGENT *agent) {
  RUNARA_SSH2_REAL(libssh2_agent_free);
  return fn(agent);
}

int libssh2_agent_get_identity(LIBSSH2_AGENT *agent, struct libssh2_agent_publickey **store, struct libssh2_agent_publickey *prev) {
  RUNARA_SSH2_REAL(libssh2_agent_get_identity);
  return fn(agent, store, prev);
}

LIBSSH2_AGENT *libssh2_agent_init(LIBSSH2_SESSION *session) {
  RUNARA_SSH2_REAL(libssh2_agent_init);
  return fn(session);
}

int libssh2_agent_list_identities(LIBSSH2_AGENT *agent) {
  RUNARA_SSH2_REAL(libssh2_agent_list_identities);
  return fn(agent);
}

void libssh2_agent_set_identity_path(LIBSSH2_AGENT *agent, const char *path) {
  RUNARA_SSH2_REAL(libssh2_agent_set_identity_path);
  return fn(agent, path);
}

int libssh2_agent_userauth(LIBSSH2_AGENT *agent, const char *username, struct libssh2_agent_publickey *identity) {
  RUNARA_SSH2_REAL(libssh2_agent_userauth);
  return fn(agent, username, identity);
}

int libssh2_channel_close(LIBSSH2_CHANNEL *channel) {
  RUNARA_SSH2_REAL(libssh2_channel_close);
  return fn(channel);
}

LIBSSH2_CHANNEL *libssh2_channel_direct_tcpip_ex(LIBSSH2_SESSION *session, const char *host, int port, const char *shost, int sport) {
  RUNARA_SSH2_REAL(libssh2_channel_direct_tcpip_ex);
  return fn(session, host, port, shost, sport);
}

int libssh2_channel_eof(LIBSSH2_CHANNEL *channel) {
  RUNARA_SSH2_REAL(libssh2_channel_eof);
  return fn(channel);
}

int libssh2_channel_free(LIBSSH2_CHANNEL *channel) {
  RUNARA_SSH2_REAL(libssh2_channel_free);
  return fn(channel);
}

int libssh2_channel_get_exit_signal(LIBSSH2_CHANNEL* channel, char **exitsignal, size_t *exitsignal_len, char **errmsg, size_t *errmsg_len, char **langtag, size_t *langtag_len) {
  RUNARA_SSH2_REAL(libssh2_channel_get_exit_signal);
  return fn(channel, exitsignal, exitsignal_len, errmsg, errmsg_len, langtag, langtag_len);
}

int libssh2_channel_get_exit_status(LIBSSH2_CHANNEL* channel) {
  RUNARA_SSH2_REAL(libssh2_channel_get_exit_status);
  return fn(channel);
}

int libssh2_channel_handle_extended_data2(LIBSSH2_CHANNEL *channel, int ignore_mode) {
  RUNARA_SSH2_REAL(libssh2_channel_handle_extended_data2);
  return fn(channel, ignore_mode);
}

LIBSSH2_CHANNEL *libssh2_channel_open_ex(LIBSSH2_SESSION *session, const char *channel_type, unsigned int channel_type_len, unsigned int window_size, unsigned int packet_size, const char *message, unsigned int message_len) {
  RUNARA_SSH2_REAL(libssh2_channel_open_ex);
  return fn(session, channel_type, channel_type_len, window_size, packet_size, message, message_len);
}

int libssh2_channel_process_startup(LIBSSH2_CHANNEL *channel, const char *request, unsigned int request_len, const char *message, unsigned int message_len) {
  RUNARA_SSH2_REAL(libssh2_channel_process_startup);
  return fn(channel, request, request_len, message, message_len);
}

ssize_t libssh2_channel_read_ex(LIBSSH2_CHANNEL *channel, int stream_id, char *buf, size_t buflen) {
  RUNARA_SSH2_REAL(libssh2_channel_read_ex);
  return fn(channel, stream_id, buf, buflen);
}

int libssh2_channel_send_eof(LIBSSH2_CHANNEL *channel) {
  RUNARA_SSH2_REAL(libssh2_channel_send_eof);
  return fn(channel);
}

int libssh2_channel_wait_closed(LIBSSH2_CHANNEL *channel) {
  RUNARA_SSH2_REAL(libssh2_channel_wait_closed);
  return fn(channel);
}

ssize_t libssh2_channel_write_ex(LIBSSH2_CHANNEL *channel, int stream_id, const char *buf, size_t buflen) {
  RUNARA_SSH2_REAL(libssh2_channel_write_ex);
  return fn(channel, stream_id, buf, buflen);
}

void libssh2_free(LIBSSH2_SESSION *session, void *ptr) {
  RUNARA_SSH2_REAL(libssh2_free);
  return fn(session, ptr);
}

const char *libssh2_hostkey_hash(LIBSSH2_SESSION *session, int hash_type) {
  RUNARA_SSH2_REAL(libssh2_hostkey_hash);
  return fn(session, hash_type);
}

int libssh2_init(int flags) {
  RUNARA_SSH2_REAL(libssh2_init);
  return fn(flags);
}

void libssh2_keepalive_config(LIBSSH2_SESSION *session, int want_reply, unsigned interval) {
  RUNARA_SSH2_REAL(libssh2_keepalive_config);
  return fn(session, want_reply, interval);
}

int libssh2_keepalive_send(LIBSSH2_SESSION *session, int *seconds_to_next) {
  RUNARA_SSH2_REAL(libssh2_keepalive_send);
  return fn(session, seconds_to_next);
}

int libssh2_knownhost_checkp(LIBSSH2_KNOWNHOSTS *hosts, const char *host, int port, const char *key, size_t keylen, int typemask, struct libssh2_knownhost **knownhost) {
  RUNARA_SSH2_REAL(libssh2_knownhost_checkp);
  return fn(hosts, host, port, key, keylen, typemask, knownhost);
}

void libssh2_knownhost_free(LIBSSH2_KNOWNHOSTS *hosts) {
  RUNARA_SSH2_REAL(libssh2_knownhost_free);
  return fn(hosts);
}

LIBSSH2_KNOWNHOSTS *libssh2_knownhost_init(LIBSSH2_SESSION *session) {
  RUNARA_SSH2_REAL(libssh2_knownhost_init);
  return fn(session);
}

int libssh2_knownhost_readfile(LIBSSH2_KNOWNHOSTS *hosts, const char *filename, int type) {
  RUNARA_SSH2_REAL(libssh2_knownhost_readfile);
  return fn(hosts, filename, type);
}

int libssh2_session_block_directions(LIBSSH2_SESSION *session) {
  RUNARA_SSH2_REAL(libssh2_session_block_directions);
  return fn(session);
}

void *libssh2_session_callback_set(LIBSSH2_SESSION *session, int cbtype, void *callback) {
  RUNARA_SSH2_REAL(libssh2_session_callback_set);
  return fn(session, cbtype, callback);
}

int libssh2_session_disconnect_ex(LIBSSH2_SESSION *session, int reason, const char *description, const char *lang) {
  RUNARA_SSH2_REAL(libssh2_session_disconnect_ex);
  return fn(session, reason, description, lang);
}

int libssh2_session_free(LIBSSH2_SESSION *session) {
  RUNARA_SSH2_REAL(libssh2_session_free);
  return fn(session);
}

int libssh2_session_handshake(LIBSSH2_SESSION *session, libssh2_socket_t sock) {
  RUNARA_SSH2_REAL(libssh2_session_handshake);
  return fn(session, sock);
}

const char *libssh2_session_hostkey(LIBSSH2_SESSION *session, size_t *len, int *type) {
  RUNARA_SSH2_REAL(libssh2_session_hostkey);
  return fn(session, len, type);
}

LIBSSH2_SESSION* libssh2_session_init_ex(LIBSSH2_ALLOC_FUNC((*my_alloc)), LIBSSH2_FREE_FUNC((*my_free)),
                                         LIBSSH2_REALLOC_FUNC((*my_realloc)), void* abstract) {
  RUNARA_SSH2_REAL(libssh2_session_init_ex);
  return fn(my_alloc, my_free, my_realloc, abstract);
}

int libssh2_session_last_errno(LIBSSH2_SESSION *session) {
  RUNARA_SSH2_REAL(libssh2_session_last_errno);
  return fn(session);
}

int libssh2_session_last_error(LIBSSH2_SESSION *session, char **errmsg, int *errmsg_len, int want_buf) {
  RUNARA_SSH2_REAL(libssh2_session_last_error);
  return fn(session, errmsg, errmsg_len, want_buf);
}

void libssh2_session_set_blocking(LIBSSH2_SESSION* session, int blocking) {
  RUNARA_SSH2_REAL(libssh2_session_set_blocking);
  return fn(session, blocking);
}

int libssh2_sftp_close_handle(LIBSSH2_SFTP_HANDLE *handle) {
  RUNARA_SSH2_REAL(libssh2_sftp_close_handle);
  return fn(handle);
}

int libssh2_sftp_fstat_ex(LIBSSH2_SFTP_HANDLE *handle, LIBSSH2_SFTP_ATTRIBUTES *attrs, int setstat) {
  RUNARA_SSH2_REAL(libssh2_sftp_fstat_ex);
  return fn(handle, attrs, setstat);
}

LIBSSH2_SFTP *libssh2_sftp_init(LIBSSH2_SESSION *session) {
  RUNARA_SSH2_REAL(libssh2_sftp_init);
  return fn(session);
}

unsigned long libssh2_sftp_last_error(LIBSSH2_SFTP *sftp) {
  RUNARA_SSH2_REAL(libssh2_sftp_last_error);
  return fn(sftp);
}

int libssh2_sftp_mkdir_ex(LIBSSH2_SFTP *sftp, const char *path, unsigned int path_len, long mode) {
  RUNARA_SSH2_REAL(libssh2_sftp_mkdir_ex);
  return fn(sftp, path, path_len, mode);
}

LIBSSH2_SFTP_HANDLE *libssh2_sftp_open_ex(LIBSSH2_SFTP *sftp, const char *filename, unsigned int filename_len, unsigned long flags, long mode, int open_type) {
  RUNARA_SSH2_REAL(libssh2_sftp_open_ex);
  return fn(sftp, filename, filename_len, flags, mode, open_type);
}

ssize_t libssh2_sftp_read(LIBSSH2_SFTP_HANDLE *handle, char *buffer, size_t buffer_maxlen) {
  RUNARA_SSH2_REAL(libssh2_sftp_read);
  return fn(handle, buffer, buffer_maxlen);
}

int libssh2_sftp_readdir_ex(LIBSSH2_SFTP_HANDLE *handle, char *buffer, size_t buffer_maxlen, char *longentry, size_t longentry_maxlen, LIBSSH2_SFTP_ATTRIBUTES *attrs) {
  RUNARA_SSH2_REAL(libssh2_sftp_readdir_ex);
  return fn(handle, buffer, buffer_maxlen, longentry, longentry_maxlen, attrs);
}

int libssh2_sftp_shutdown(LIBSSH2_SFTP *sftp) {
  RUNARA_SSH2_REAL(libssh2_sftp_shutdown);
  return fn(sftp);
}

int libssh2_sftp_stat_ex(LIBSSH2_SFTP *sftp, const char *path, unsigned int path_len, int stat_type, LIBSSH2_SFTP_ATTRIBUTES *attrs) {
  RUNARA_SSH2_REAL(libssh2_sftp_stat_ex);
  return fn(sftp, path, path_len, stat_type, attrs);
}

ssize_t libssh2_sftp_write(LIBSSH2_SFTP_HANDLE *handle, const char *buffer, size_t count) {
  RUNARA_SSH2_REAL(libssh2_sftp_write);
  return fn(handle, buffer, count);
}

int libssh2_userauth_publickey_fromfile_ex(LIBSSH2_SESSION *session, const char *username, unsigned int username_len, const char *publickey, const char *privatekey, const char *passphrase) {
  RUNARA_SSH2_REAL(libssh2_userauth_publickey_fromfile_ex);
  return fn(session, username, username_len, publickey, privatekey, passphrase);
}

int libssh2_userauth_publickey_frommemory(LIBSSH2_SESSION *session, const char *username, size_t username_len, const char *publickeyfiledata, size_t publickeyfiledata_len, const char *privatekeyfiledata, size_t privatekeyfiledata_len, const char *passphrase) {
  RUNARA_SSH2_REAL(libssh2_userauth_publickey_frommemory);
  return fn(session, username, username_len, publickeyfiledata, publickeyfiledata_len, privatekeyfiledata, privatekeyfiledata_len, passphrase);
}

}  // extern "C"
