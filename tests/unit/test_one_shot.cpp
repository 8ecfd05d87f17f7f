// gpu::OneShot's contract with a target that reports at once: SshCommandTarget answers on_exit
// before run() returns when its session is already lost (a node that died mid-run, as in
// serving_multinode's fault test). The callback must still come from the loop, never inside
// start(), and may destroy the OneShot.
#include <catch2/catch.hpp>

#include <memory>
#include <string>

#include "gpu/one_shot.hpp"
#include "loopback_fixtures.hpp"

using runara::CommandTarget;
using runara::gpu::Collected;
using runara::gpu::OneShot;
using runara_test::TestLoop;

namespace {

// Reports every command as not started, from inside run(), as a lost ssh session does.
class LostTarget final : public CommandTarget {
 public:
  std::string name() const override { return "gpu-2 (runara@203.0.113.9:22)"; }
  std::unique_ptr<Running> run(const std::string&, Handlers handlers) override {
    Exit exit;
    exit.error = "cannot run on gpu-2: the SSH session is not connected";
    handlers.on_exit(exit);
    return std::make_unique<Running>();
  }
};

}  // namespace

TEST_CASE("OneShot: a target that reports inside run() is answered from the loop, and may be destroyed then",
          "[gpu_one_shot]") {
  TestLoop loop;
  {
    LostTarget target;
    auto shot = std::make_unique<OneShot>(&loop.loop, 5000);
    int calls = 0;
    std::string error;
    shot->start(target, "amd-smi metric --json", "amd-smi on gpu-2", [&](Collected c) {
      ++calls;
      error = c.error;
      shot.reset();  // the sampler drops its OneShot in the callback
    });
    CHECK(calls == 0);  // not inside start()
    REQUIRE(loop.run_until([&] { return calls > 0; }, 5));
    CHECK(calls == 1);
    CHECK(shot == nullptr);
    CHECK(error == "amd-smi on gpu-2: cannot run on gpu-2: the SSH session is not connected");
  }
  CHECK(loop.close() == 0);
}
