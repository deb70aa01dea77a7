// Three DLedgerServers in one process (each with its own store and entry log, real sockets on
// 127.0.0.1): one leader is elected and becomes writable, a put completes once a majority has
// it, followers commit and dispatch the same bytes, and when the leader stops the others elect a
// new one that accepts writes. Runs under the sanitizers with the core's invariant checks
// (debug builds). Every wait is bounded.
#include "dledger/dledger_server.h"

#include <arpa/inet.h>
#include <gtest/gtest.h>
#include <netinet/in.h>
#include <sys/socket.h>
#include <unistd.h>

#include <future>
#include <thread>

#include "../store/message_store_test_util.h"

namespace comet::dledger {
namespace {

using store::testing::make_message;
using store::testing::tiny_config;
using namespace std::chrono_literals;

uint16_t ephemeral_port() {
    const int fd = ::socket(AF_INET, SOCK_STREAM, 0);
    sockaddr_in a{};
    a.sin_family = AF_INET;
    a.sin_addr.s_addr = htonl(INADDR_LOOPBACK);
    ::bind(fd, reinterpret_cast<sockaddr*>(&a), sizeof a);
    socklen_t len = sizeof a;
    ::getsockname(fd, reinterpret_cast<sockaddr*>(&a), &len);
    ::close(fd);
    return ntohs(a.sin_port);
}

bool wait_until(const std::function<bool()>& fn, std::chrono::milliseconds timeout) {
    const auto until = std::chrono::steady_clock::now() + timeout;
    while (std::chrono::steady_clock::now() < until) {
        if (fn()) {
            return true;
        }
        std::this_thread::sleep_for(10ms);
    }
    return fn();
}

class DLedgerServerTest : public store::testing::StoreDirTest {
protected:
    struct Peer {
        std::unique_ptr<EntryLog> log;
        std::unique_ptr<store::MessageStore> store;
        std::unique_ptr<DLedgerServer> server;
    };

    void SetUp() override {
        StoreDirTest::SetUp();
        std::string list;
        for (int i = 0; i < 3; ++i) {
            list += (i > 0 ? ";" : "") + ("n" + std::to_string(i)) + "-127.0.0.1:" +
                    std::to_string(ephemeral_port());
        }
        for (int i = 0; i < 3; ++i) {
            auto cfg = parse_dledger_config("g", list, "n" + std::to_string(i), "", nullptr);
            ASSERT_TRUE(cfg.is_ok()) << cfg.status().to_string();
            cfg->listen_host = "127.0.0.1";
            cfg->commit_timeout = 10s;
            cfg->storage_failure_exit_delay = 300ms;
            Peer& p = peers_[i];
            const std::string root = root_ + "/n" + std::to_string(i);
            auto log = EntryLog::open(root + "/dledger");
            ASSERT_TRUE(log.is_ok());
            p.log = std::move(log).value();
            EntryLog* entries = p.log.get();
            store::MessageStoreOptions o;
            o.start_scheduler = false;
            o.recovery_keep_end = [entries](store::PhysicalOffset e) {
                return recovery_keep_end(*entries, e);
            };
            std::atomic<DLedgerServer*>* self = &servers_[i];
            o.dispatch_limit = [entries, self] {
                DLedgerServer* server = self->load();
                return server != nullptr ? store::PhysicalOffset(server->committed_offset())
                                         : committed_end_at_open(*entries);
            };
            auto s = store::MessageStore::open(tiny_config(root), clock_, o);
            ASSERT_TRUE(s.is_ok()) << s.status().to_string();
            p.store = std::move(s).value();
            p.server = std::make_unique<DLedgerServer>(*cfg, *p.log, *p.store, clock_);
            // As the broker does: the dispatch limit reads the server before the store's
            // dispatch thread starts, never the entry log the driver writes.
            servers_[i].store(p.server.get());
            p.store->start();
        }
        for (Peer& p : peers_) {
            ASSERT_TRUE(p.server->start().is_ok());
        }
    }
    void TearDown() override {
        // Server first (its driver writes to the store), then the store (its dispatch thread
        // reads the server's committed offset), then nothing refers to either.
        for (int i = 0; i < 3; ++i) {
            if (peers_[i].server) {
                peers_[i].server->shutdown();
            }
            if (peers_[i].store) {
                peers_[i].store->shutdown();
            }
            servers_[i].store(nullptr);
            peers_[i].server.reset();
            peers_[i].store.reset();
            peers_[i].log.reset();
        }
        StoreDirTest::TearDown();
    }
    int writable_leader() {
        int found = -1;
        for (int i = 0; i < 3; ++i) {
            if (peers_[i].server && peers_[i].server->writable()) {
                EXPECT_EQ(found, -1) << "two writable leaders";
                found = i;
            }
        }
        return found;
    }
    // The send path as the broker runs it: gate, store put, commit wait.
    // `advance`: how far the injected clock moves between the waiter's registration and the
    // proposal (the commit-wait figures read that clock).
    store::PutMessageStatus put(int i, const std::string& body,
                                Duration advance = Duration::zero()) {
        Peer& p = peers_[i];
        if (!p.server->begin_put()) {
            return store::PutMessageStatus::kServiceNotAvailable;
        }
        std::promise<store::PutMessageStatus> done;
        auto fut = done.get_future();
        p.store->put_message(make_message("T", 0, body), [&](const store::PutMessageResult& r) {
            if (!r.ok()) {
                done.set_value(r.status);
            } else {
                p.server->wait_committed(r.append.end_offset().value(),
                                         [&](store::PutMessageStatus st) { done.set_value(st); });
                clock_.advance(advance);
            }
            p.server->end_put();
            p.server->notify_appended();
        });
        if (fut.wait_for(30s) != std::future_status::ready) {
            return store::PutMessageStatus::kUnknownError;
        }
        return fut.get();
    }

    ManualClock clock_;
    Peer peers_[3];
    std::atomic<DLedgerServer*> servers_[3] = {nullptr, nullptr, nullptr};
};

TEST_F(DLedgerServerTest, ElectsCommitsOnAMajorityAndFailsOver) {
    int leader = -1;
    ASSERT_TRUE(wait_until([&] { return (leader = writable_leader()) >= 0; }, 20s));
    for (int k = 0; k < 20; ++k) {
        ASSERT_EQ(put(leader, "m" + std::to_string(k)), store::PutMessageStatus::kPutOk);
    }
    const int follower = (leader + 1) % 3;
    EXPECT_EQ(put(follower, "refused"), store::PutMessageStatus::kServiceNotAvailable);
    const int64_t end = peers_[leader].store->commit_log().max_offset().value();
    ASSERT_TRUE(wait_until(
        [&] {
            for (int i = 0; i < 3; ++i) {
                if (peers_[i].server->committed_offset() != end ||
                    peers_[i].store->dispatched_offset().value() != end) {
                    return false;
                }
            }
            return true;
        },
        20s));
    for (int i = 0; i < 3; ++i) {
        EXPECT_EQ(peers_[i].store->get_max_offset_in_queue("T", 0).value(), 20) << "peer " << i;
    }
    auto info = peers_[leader].server->runtime_info();
    EXPECT_EQ(info["dledgerRole"], "Leader");
    EXPECT_EQ(info["dledgerCommittedOffset"], std::to_string(end));

    // The leader stops: the other two elect one of themselves, which takes writes.
    peers_[leader].server->shutdown();  // kept until TearDown: its store still reads it
    int next = -1;
    ASSERT_TRUE(wait_until([&] { return (next = writable_leader()) >= 0; }, 20s));
    EXPECT_NE(next, leader);
    EXPECT_EQ(put(next, "after"), store::PutMessageStatus::kPutOk);
    // Committed means dispatchable: the ConsumeQueue follows shortly (the dispatch thread).
    EXPECT_TRUE(wait_until(
        [&] { return peers_[next].store->get_max_offset_in_queue("T", 0).value() == 21; }, 20s));
}

// GET_BROKER_RUNTIME_INFO's commit-wait figures: every put answered by a commit is counted, with
// its wait from registration to commit on the injected clock (here moved 2 ms per put before its
// proposal, so each counted wait is at least that).
TEST_F(DLedgerServerTest, CountsThePutsAnsweredByACommitAndTheirWaits) {
    int leader = -1;
    ASSERT_TRUE(wait_until([&] { return (leader = writable_leader()) >= 0; }, 20s));
    auto counter = [&](const char* key) {
        return std::stoll(peers_[leader].server->runtime_info()[key]);
    };
    const int64_t waits_before = counter("dledgerCommitWaits");
    const int64_t us_before = counter("dledgerCommitWaitUsTotal");
    constexpr int kPuts = 10;
    for (int k = 0; k < kPuts; ++k) {
        ASSERT_EQ(put(leader, "w" + std::to_string(k), 2ms), store::PutMessageStatus::kPutOk);
    }
    const int64_t waits = counter("dledgerCommitWaits") - waits_before;
    const int64_t us = counter("dledgerCommitWaitUsTotal") - us_before;
    // A put whose commit came before its waiter registered is answered at once, uncounted; a
    // put waits for followers that sync, so nearly all of them register.
    EXPECT_GE(waits, 1);
    EXPECT_LE(waits, kPuts);
    EXPECT_GE(us, 2000 * waits);
    for (int i = 0; i < 3; ++i) {
        if (i != leader) {
            EXPECT_EQ(peers_[i].server->runtime_info()["dledgerCommitWaits"], "0") << "peer " << i;
        }
    }
}

// Commit waiters may register out of end-offset order (puts on different I/O threads): each
// completes once the commit covers its own end, a waiter beyond the log keeps waiting, and
// shutdown fails whatever still waits. Every completion runs exactly once.
TEST_F(DLedgerServerTest, WaitersRegisteredOutOfOrderCompleteByTheirOwnEnd) {
    int leader = -1;
    ASSERT_TRUE(wait_until([&] { return (leader = writable_leader()) >= 0; }, 20s));
    Peer& p = peers_[leader];
    ASSERT_TRUE(p.server->begin_put());
    std::vector<int64_t> ends;
    for (int k = 0; k < 3; ++k) {
        std::promise<int64_t> end;
        auto fut = end.get_future();
        p.store->put_message(make_message("W", 0, "w" + std::to_string(k)),
                             [&](const store::PutMessageResult& r) {
                                 end.set_value(r.ok() ? r.append.end_offset().value() : -1);
                             });
        ASSERT_EQ(fut.wait_for(10s), std::future_status::ready);
        ends.push_back(fut.get());
        ASSERT_GT(ends.back(), 0);
    }
    std::atomic<int> ok{0};
    std::atomic<int> calls{0};
    std::promise<store::PutMessageStatus> far_status;
    auto far = far_status.get_future();
    for (int k : {2, 0, 1}) {
        p.server->wait_committed(ends[static_cast<size_t>(k)], [&](store::PutMessageStatus st) {
            calls.fetch_add(1);
            if (st == store::PutMessageStatus::kPutOk) {
                ok.fetch_add(1);
            }
        });
    }
    p.server->wait_committed(ends.back() + 100000, [&](store::PutMessageStatus st) {
        calls.fetch_add(1);
        far_status.set_value(st);
    });
    p.server->end_put();
    p.server->notify_appended();
    ASSERT_TRUE(wait_until([&] { return ok.load() == 3; }, 20s)) << ok.load();
    EXPECT_EQ(far.wait_for(200ms), std::future_status::timeout) << "completed beyond the log";
    p.server->shutdown();
    ASSERT_EQ(far.wait_for(10s), std::future_status::ready);
    EXPECT_EQ(far.get(), store::PutMessageStatus::kServiceNotAvailable);
    EXPECT_EQ(calls.load(), 4);
}

// Decision 036: with both followers up, the leader's own sync is a spare vote and waits; the
// followers commit alone. With one follower down every commit needs the leader's vote: its sync
// starts once a request waited (about two follower rounds) and every put still commits.
TEST_F(DLedgerServerTest, LeaderSyncsItsLogOnlyWhenACommitWaitsForIt) {
    int leader = -1;
    ASSERT_TRUE(wait_until([&] { return (leader = writable_leader()) >= 0; }, 20s));
    auto counter = [&](const char* key) {
        return std::stoll(peers_[leader].server->runtime_info()[key]);
    };
    for (int k = 0; k < 20; ++k) {
        ASSERT_EQ(put(leader, "a" + std::to_string(k)), store::PutMessageStatus::kPutOk);
    }
    EXPECT_GT(counter("dledgerLeaderSyncsDeferredCommitted"), 0);
    const int64_t for_commit_before = counter("dledgerLeaderSyncsForCommit");

    const int down = (leader + 1) % 3;
    peers_[down].server->shutdown();  // kept until TearDown: its store still reads it
    for (int k = 0; k < 5; ++k) {
        ASSERT_EQ(put(leader, "b" + std::to_string(k)), store::PutMessageStatus::kPutOk) << k;
    }
    EXPECT_GT(counter("dledgerLeaderSyncsForCommit"), for_commit_before);
    const int64_t end = peers_[leader].store->commit_log().max_offset().value();
    EXPECT_EQ(peers_[leader].server->committed_offset(), end);
}

// A leader whose log storage fails steps down at once: puts are refused (SERVICE_NOT_AVAILABLE,
// not a wait for the commit timeout), GET_BROKER_RUNTIME_INFO says why, the other two elect a
// leader that takes writes, and after the exit delay the broker's handler is called (it exits
// so a supervisor restarts the peer).
TEST_F(DLedgerServerTest, LeaderWhoseStorageFailsStepsDownRefusesPutsAndReports) {
    int leader = -1;
    ASSERT_TRUE(wait_until([&] { return (leader = writable_leader()) >= 0; }, 20s));
    ASSERT_EQ(put(leader, "before"), store::PutMessageStatus::kPutOk);
    std::promise<Status> handled;
    auto handled_fut = handled.get_future();
    peers_[leader].server->set_storage_failure_handler(
        [&](const Status& st) { handled.set_value(st); });
    peers_[leader].server->inject_storage_error_for_test();
    // The put that meets the failure is not acknowledged; nothing waits for the commit timeout
    // (the injected clock never moves, so a waiter left behind would hang until put() gives up).
    const auto first = put(leader, "meets the failure");
    EXPECT_NE(first, store::PutMessageStatus::kPutOk);
    EXPECT_NE(first, store::PutMessageStatus::kUnknownError) << "left waiting";
    ASSERT_TRUE(wait_until(
        [&] { return peers_[leader].server->role_info().role != raft::Role::kLeader; }, 5s));
    EXPECT_FALSE(peers_[leader].server->writable());
    EXPECT_EQ(put(leader, "refused"), store::PutMessageStatus::kServiceNotAvailable);
    auto info = peers_[leader].server->runtime_info();
    EXPECT_NE(info["dledgerRole"], "Leader");
    EXPECT_EQ(info["dledgerStorageFailed"], "1");
    EXPECT_NE(info["dledgerStorageError"].find("injected"), std::string::npos)
        << info["dledgerStorageError"];
    EXPECT_NE(peers_[leader].server->role_info().storage_error, "");
    // The others go on without it.
    int next = -1;
    ASSERT_TRUE(wait_until([&] { return (next = writable_leader()) >= 0 && next != leader; }, 20s));
    EXPECT_EQ(put(next, "after"), store::PutMessageStatus::kPutOk);
    EXPECT_EQ(peers_[next].server->runtime_info()["dledgerStorageFailed"], "0");
    // It never comes back as leader, and the broker is told to restart it.
    ASSERT_EQ(handled_fut.wait_for(20s), std::future_status::ready);
    EXPECT_EQ(handled_fut.get().code(), Errc::kIoError);
    EXPECT_FALSE(peers_[leader].server->writable());
}

}  // namespace
}  // namespace comet::dledger
