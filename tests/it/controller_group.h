#pragma once
// A group of three controllers on 127.0.0.1 with ephemeral peer ports (the process tests of
// controller mode share it), and the wait for its one leader. Each member is its own
// mqcontroller process, or (ControllerHost::kNamesrv) the controller inside an mqnamesrv with
// enableControllerInNamesrv=true, which listens on a name server port of its own as well.
// Owned by one test thread; the destructor kills every process.

#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <vector>

#include "harness.h"

namespace comet::it {

enum class ControllerHost { kMqcontroller, kNamesrv };

class ControllerGroup {
public:
    explicit ControllerGroup(const TempDir& dir, std::map<std::string, std::string> extra = {},
                             ControllerHost host = ControllerHost::kMqcontroller);

    Status start(int i);
    Status start_all();
    void kill(int i);
    uint16_t port(int i) const { return ports_[static_cast<size_t>(i)]; }
    // "127.0.0.1:a;127.0.0.1:b;127.0.0.1:c" (controllerAddr, mqadmin -a).
    std::string addrs() const;
    // kNamesrv only: member i's name server listenPort, and all three (namesrvAddr).
    uint16_t namesrv_port(int i) const { return namesrv_ports_[static_cast<size_t>(i)]; }
    std::string namesrv_addrs() const;
    std::string logs() const;
    bool running(int i);
    // The process of controller i (null before its first start).
    Process* process(int i) { return procs_[static_cast<size_t>(i)].get(); }
    std::string store(int i) const;  // controller i's controllerStorePath

private:
    const TempDir& dir_;
    std::vector<uint16_t> ports_;
    std::vector<uint16_t> namesrv_ports_;  // empty for kMqcontroller
    std::vector<ProcessOptions> options_;
    std::vector<std::unique_ptr<Process>> procs_;
};

// The controller that answers GET_METADATA_INFO with isLeader=true, waiting (bounded) until
// exactly one of the running ones does and every running one names it.
std::optional<int> wait_leader(net::RemotingClient& client, ControllerGroup& g,
                               std::set<int> running = {0, 1, 2});

}  // namespace comet::it
