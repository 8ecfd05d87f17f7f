// `runara serve-fake-do`: the fake DigitalOcean API (sim/) on loopback, for trying
// scenarios and teardown without an account.
#pragma once

namespace runara::cli {

int serve_fake_do(int argc, char** argv);

}  // namespace runara::cli
