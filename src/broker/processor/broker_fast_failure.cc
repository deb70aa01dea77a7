#include "broker/processor/broker_fast_failure.h"

#include <fmt/format.h>
#include <pthread.h>

#include "base/log_tag.h"
#include "protocol/response_code.h"

namespace comet::broker {

namespace {
constexpr auto kFirstPassDelay = std::chrono::seconds(1);  // Java: initial delay 1000 ms
constexpr auto kPeriod = std::chrono::milliseconds(10);    // Java: every 10 ms
}  // namespace

std::string fast_failure_remark(const char* tag, std::chrono::milliseconds waited, size_t left) {
    return fmt::format(
        "[{}]broker busy, start flow control for a while, period in queue: {}ms, size of queue: "
        "{}",
        tag, waited.count(), left);
}

BrokerFastFailure::BrokerFastFailure(Queues queues, const BrokerConfigHolder* config,
                                     std::function<bool()> page_cache_busy)
    : queues_(std::move(queues)), config_(config), page_cache_busy_(std::move(page_cache_busy)) {}

BrokerFastFailure::~BrokerFastFailure() { shutdown(); }

void BrokerFastFailure::start() {
    if (!thread_.joinable()) {
        thread_ = tagged_thread([this] { run(); });
    }
}

void BrokerFastFailure::shutdown() {
    {
        MutexLock l(mu_);
        stopping_ = true;
    }
    cv_.notify_all();
    if (thread_.joinable()) {
        thread_.join();
    }
}

void BrokerFastFailure::run() {
    pthread_setname_np(pthread_self(), "BrokerFastFail");
    auto next = std::chrono::steady_clock::now() + kFirstPassDelay;
    for (;;) {
        {
            MutexLock l(mu_);
            while (!stopping_ && std::chrono::steady_clock::now() < next) {
                cv_.wait_until(mu_, next);
            }
            if (stopping_) {
                return;
            }
        }
        (void)clean_expired(std::chrono::steady_clock::now());
        next = std::chrono::steady_clock::now() + kPeriod;
    }
}

size_t BrokerFastFailure::clean_expired(std::chrono::steady_clock::time_point now) {
    const std::shared_ptr<const BrokerConfig> cfg = config_->snapshot();
    if (!cfg->broker_fast_failure_enable) {
        return 0;
    }
    size_t answered = 0;
    if (queues_.send != nullptr && page_cache_busy_) {
        // Java polls the send queue while the page cache stays busy: each send is answered.
        while (page_cache_busy_()) {
            auto taken = queues_.send->take_head_if_waited(std::chrono::milliseconds(0), now);
            if (!taken) {
                break;
            }
            taken->reject(taken->task, protocol::ResponseCode::kSystemBusy,
                          fast_failure_remark("PCBUSY_CLEAN_QUEUE", taken->waited, taken->left));
            ++answered;
        }
    }
    using std::chrono::milliseconds;
    const std::pair<net::ThreadPoolExecutor*, int64_t> queues[] = {
        {queues_.send.get(), cfg->wait_time_mills_in_send_queue},
        {queues_.pull.get(), cfg->wait_time_mills_in_pull_queue},
        {queues_.heartbeat.get(), cfg->wait_time_mills_in_heartbeat_queue},
        {queues_.end_transaction.get(), cfg->wait_time_mills_in_transaction_queue},
    };
    for (const auto& [exec, max_wait_ms] : queues) {
        if (exec != nullptr) {
            answered += clean_queue(*exec, milliseconds(max_wait_ms), now, "TIMEOUT_CLEAN_QUEUE");
        }
    }
    return answered;
}

size_t BrokerFastFailure::clean_queue(net::ThreadPoolExecutor& exec,
                                      std::chrono::milliseconds max_wait,
                                      std::chrono::steady_clock::time_point now, const char* tag) {
    size_t answered = 0;
    while (auto taken = exec.take_head_if_waited(max_wait, now)) {
        taken->reject(taken->task, protocol::ResponseCode::kSystemBusy,
                      fast_failure_remark(tag, taken->waited, taken->left));
        ++answered;
    }
    return answered;
}

void BrokerFastFailure::add_runtime_info(std::map<std::string, std::string>* table,
                                         std::chrono::steady_clock::time_point now) const {
    const std::pair<const char*, net::ThreadPoolExecutor*> pools[] = {
        {"send", queues_.send.get()}, {"pull", queues_.pull.get()}, {"query", queues_.query.get()}};
    for (const auto& [name, exec] : pools) {
        if (exec == nullptr) {
            continue;
        }
        const std::string prefix = std::string(name) + "ThreadPoolQueue";
        (*table)[prefix + "Size"] = std::to_string(exec->queued());
        (*table)[prefix + "Capacity"] = std::to_string(exec->capacity());
        (*table)[prefix + "HeadWaitTimeMills"] = std::to_string(exec->head_wait(now).count());
    }
    if (queues_.end_transaction != nullptr) {
        (*table)["EndTransactionQueueSize"] = std::to_string(queues_.end_transaction->queued());
        (*table)["EndTransactionThreadPoolQueueCapacity"] =
            std::to_string(queues_.end_transaction->capacity());
    }
}

}  // namespace comet::broker
