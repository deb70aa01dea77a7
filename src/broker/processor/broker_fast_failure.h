#pragma once
// BrokerFastFailure (Java org.apache.rocketmq.broker.latency.BrokerFastFailure): answers queued
// requests SYSTEM_BUSY instead of letting them wait for an executor that is behind, so that a
// client retries another broker at once instead of timing out here.
// Every 10 ms (from 1 s after start), with brokerFastFailureEnable:
// - while the store's page cache is busy (MessageStore::is_os_page_cache_busy), every queued
//   send is answered "[PCBUSY_CLEAN_QUEUE]broker busy, start flow control for a while, period
//   in queue: <ms>ms, size of queue: <n>";
// - in the send, pull, heartbeat and end-transaction queues, each head request that waited
//   waitTimeMillsIn{Send,Pull,Heartbeat,Transaction}Queue or more is answered
//   "[TIMEOUT_CLEAN_QUEUE]broker busy, ..." (same tail), oldest first, until a younger head.
// Sends that run inline on the I/O threads (decision 019) are in no queue: the store refuses
// them itself while the page cache is busy (OS_PAGE_CACHE_BUSY -> "[PC_SYNCHRONIZED]...").
//
// Owner: BrokerController. Threads: its own "BrokerFastFailure" thread (start/shutdown);
// clean_expired() may be called from any thread (tests call it with their own `now`). Holds no
// lock of its own; an answered request's Responder writes on its connection.

#include <chrono>
#include <condition_variable>
#include <functional>
#include <map>
#include <memory>
#include <string>
#include <thread>

#include "base/mutex.h"
#include "broker/context/broker_context.h"
#include "net/thread_pool_executor.h"

namespace comet::broker {

class BrokerFastFailure {
public:
    // Executors whose queues are cleaned; any may be null (not cleaned).
    struct Queues {
        std::shared_ptr<net::ThreadPoolExecutor> send;
        std::shared_ptr<net::ThreadPoolExecutor> pull;
        std::shared_ptr<net::ThreadPoolExecutor> heartbeat;
        std::shared_ptr<net::ThreadPoolExecutor> end_transaction;
        std::shared_ptr<net::ThreadPoolExecutor> query;  // reported only, never cleaned (Java)
    };

    // `config` is borrowed and read at every pass; `page_cache_busy` is called once per pass
    // and again after each send answered while it holds.
    BrokerFastFailure(Queues queues, const BrokerConfigHolder* config,
                      std::function<bool()> page_cache_busy);
    ~BrokerFastFailure();  // shutdown()
    BrokerFastFailure(const BrokerFastFailure&) = delete;
    BrokerFastFailure& operator=(const BrokerFastFailure&) = delete;

    void start();
    void shutdown();  // joins; idempotent

    // One pass (Java cleanExpiredRequest) as of `now` (steady clock, as the executors stamp
    // their tasks). Does nothing without brokerFastFailureEnable. Returns the requests answered.
    size_t clean_expired(std::chrono::steady_clock::time_point now);

    // The queue keys of GET_BROKER_RUNTIME_INFO (Java AdminBrokerProcessor#prepareRuntimeInfo):
    // {send,pull,query}ThreadPoolQueue{Size,Capacity,HeadWaitTimeMills}, EndTransactionQueueSize,
    // EndTransactionThreadPoolQueueCapacity.
    void add_runtime_info(std::map<std::string, std::string>* table,
                          std::chrono::steady_clock::time_point now) const;

private:
    // Answers every head request of `exec` that waited `max_wait` or more (0: every one).
    static size_t clean_queue(net::ThreadPoolExecutor& exec, std::chrono::milliseconds max_wait,
                              std::chrono::steady_clock::time_point now, const char* tag);
    void run();

    const Queues queues_;
    const BrokerConfigHolder* const config_;
    const std::function<bool()> page_cache_busy_;
    Mutex mu_;
    std::condition_variable_any cv_;
    bool stopping_ GUARDED_BY(mu_) = false;
    std::thread thread_;
};

// "[<tag>]broker busy, start flow control for a while, period in queue: <ms>ms, size of queue:
// <n>" (Java BrokerFastFailure's remark; tag PCBUSY_CLEAN_QUEUE or TIMEOUT_CLEAN_QUEUE).
std::string fast_failure_remark(const char* tag, std::chrono::milliseconds waited, size_t left);

}  // namespace comet::broker
