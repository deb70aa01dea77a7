// IoLoopGroup: a group that never started releases what was posted to it at shutdown.
#include "net/io_loop.h"

#include <gtest/gtest.h>

#include <asio/post.hpp>
#include <memory>

namespace comet::net {
namespace {

// A service that owns the group its handlers are posted to (as HA owns the loops it shares).
struct OwnsTheGroup {
    std::shared_ptr<IoLoopGroup> loops;
    bool stopping = false;
    int ran = 0;
};

TEST(IoLoopGroupTest, ANeverStartedGroupRunsItsQueueOutAtShutdown) {
    std::weak_ptr<OwnsTheGroup> watch;
    {
        auto svc = std::make_shared<OwnsTheGroup>();
        svc->loops = std::make_shared<IoLoopGroup>("NeverRun", 2);
        for (size_t i = 0; i < svc->loops->size(); ++i) {
            // The handler owns the service, which owns the group, which owns the handler.
            asio::post(svc->loops->context(i), [svc] {
                if (svc->stopping) {
                    return;
                }
                ++svc->ran;
            });
        }
        watch = svc;
        svc->stopping = true;  // what a service's shutdown sets before the group's
        svc->loops->shutdown();
        EXPECT_EQ(svc->ran, 0) << "the handlers saw the stop flag";
        svc->loops->shutdown();  // idempotent
    }
    EXPECT_TRUE(watch.expired()) << "a handler still owns the service: the cycle leaked";
}

TEST(IoLoopGroupTest, AStartedGroupRunsPostedHandlersOnItsThreads) {
    IoLoopGroup loops("Started", 1);
    loops.start();
    bool on_loop = false;
    loops.run_and_wait(0, [&] { on_loop = IoLoopGroup::on_io_thread(); });
    EXPECT_TRUE(on_loop);
    loops.shutdown();
    loops.shutdown();
    EXPECT_FALSE(loops.running());
}

}  // namespace
}  // namespace comet::net
