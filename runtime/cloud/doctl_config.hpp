// The DigitalOcean token in doctl's config.yaml, as doctl itself picks it: the context named by
// --context (or $DIGITALOCEAN_CONTEXT, or the file's own `context:` key) selects an entry of
// `auth-contexts:`; the context "default" (or none) is the top-level `access-token:`.
//
// Contract. Pure text reading of a file's contents, any thread. Knows only the parts of YAML
// doctl writes (top-level `key: value`, one level of indented `name: token` under
// auth-contexts, quoted or bare values, `#` comments). Never logs or returns anything but the
// token.
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace runara {

// `context` "" means the file's `context:` key, else "default".
std::optional<std::string> doctl_config_token(std::string_view yaml, const std::string& context);

}  // namespace runara
