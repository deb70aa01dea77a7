// mqadmin explainDurability (Comet): what a send to a topic requires right now, per broker
// group of its route: flush mode, needAckNums and why, which replicas are in sync and their
// gaps, whether a downgrade is in effect, and settings that contradict each other. The text
// comes from ha::explain_durability, the same function the broker logs its start-up
// "DURABILITY:" line with, fed here by GET_BROKER_CONFIG and GET_BROKER_RUNTIME_INFO.

#include <fmt/format.h>
#include <unistd.h>

#include "client/admin_client.h"
#include "ha/durability_contract.h"
#include "mqadmin/commands.h"

namespace comet::mqadmin {
namespace {

Status cmd_explain_durability(Context& ctx) {
    if (ctx.namesrv_addr.empty()) {
        return Status::error(Errc::kInvalidArgument,
                             "no name server: pass -n host:port or set NAMESRV_ADDR");
    }
    client::ClientConfig cc;
    cc.namesrv_addr = ctx.namesrv_addr;
    cc.instance_name = fmt::format("mqadmin-{}", ::getpid());
    client::AdminClient admin(cc);
    COMET_RETURN_IF_ERROR(admin.start());
    const std::string topic = ctx.opts.get('t');
    COMET_ASSIGN_OR_RETURN(auto route, admin.topic_route(topic));
    if (route.broker_datas.empty()) {
        return Status::error(Errc::kNotFound, "topic {} has no broker in its route", topic);
    }
    fmt::print(ctx.out, "Topic {}: {} broker group(s)\n", topic, route.broker_datas.size());
    for (const auto& bd : route.broker_datas) {
        // The master answers for the group; a group without one has no writable broker.
        auto master = bd.broker_addrs.find(0);
        fmt::print(ctx.out, "\n{} (cluster {})\n", bd.broker_name, bd.cluster);
        if (master == bd.broker_addrs.end()) {
            fmt::print(ctx.out,
                       "  contract: no master is registered: sends to this group fail until "
                       "one is (slaves: {})\n",
                       bd.broker_addrs.size());
            continue;
        }
        const std::string& addr = master->second;
        COMET_ASSIGN_OR_RETURN(auto config, admin.broker_config(addr));
        COMET_ASSIGN_OR_RETURN(auto runtime, admin.broker_runtime_info(addr));
        ha::DurabilityFacts facts = ha::durability_facts_from_properties(config);
        ha::add_runtime_info(runtime, &facts);
        const ha::DurabilityExplanation e = ha::explain_durability(facts);
        fmt::print(ctx.out, "  master:   {} (replicas registered: {})\n", addr,
                   bd.broker_addrs.size());
        if (!e.quorum_rules.empty()) {
            fmt::print(ctx.out, "  rules:    {}\n", e.quorum_rules);
        }
        fmt::print(ctx.out, "  contract: {}\n", e.contract);
        for (const std::string& r : e.reasons) {
            fmt::print(ctx.out, "  why:      {}\n", r);
        }
        for (const std::string& w : e.warnings) {
            fmt::print(ctx.out, "  WARNING:  {}\n", w);
        }
    }
    admin.shutdown();
    return Status::ok();
}

}  // namespace

std::vector<Command> durability_commands() {
    return {
        {"explainDurability",
         "Explain what a send to a topic requires right now (Comet)",
         {OptionSpec{'t', "topic", true, true, "topic name"}},
         cmd_explain_durability},
    };
}

}  // namespace comet::mqadmin
