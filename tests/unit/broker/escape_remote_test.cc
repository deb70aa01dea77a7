// EscapeBridge::remote_network over 127.0.0.1: the route from the name servers in turn (a dead
// one is skipped), the SEND_MESSAGE_V2 reaching the other group's master, and the errors.
#include <gtest/gtest.h>

#include <mutex>

#include "broker/replication/escape_bridge.h"
#include "net/remoting_client.h"
#include "net/remoting_server.h"
#include "protocol/request_code.h"
#include "protocol/response_code.h"
#include "protocol/send_headers.h"

namespace comet::broker {
namespace {

namespace Req = protocol::RequestCode;
namespace RC = protocol::ResponseCode;
using protocol::RemotingCommand;

// A RemotingServer on an ephemeral 127.0.0.1 port answering with `answer`; keeps the requests.
class Peer {
public:
    using Answer = std::function<RemotingCommand(const RemotingCommand&)>;
    Peer(int32_t code, Answer answer) : answer_(std::move(answer)) {
        net::RemotingServerConfig sc;
        sc.name = "EscapePeer";
        sc.listen_host = "127.0.0.1";
        sc.io_threads = 1;
        server_ = std::make_unique<net::RemotingServer>(sc);
        auto exec = std::make_shared<net::ThreadPoolExecutor>("EscapePeerExec", 1, 100);
        server_->register_processor(
            code,
            net::make_processor(
                [this](const net::ConnectionPtr&, RemotingCommand req, net::Responder respond) {
                    RemotingCommand resp = answer_(req);
                    {
                        std::lock_guard<std::mutex> l(mu_);
                        requests_.push_back(std::move(req));
                    }
                    respond(std::move(resp));
                }),
            exec);
        EXPECT_TRUE(server_->start().is_ok());
    }
    ~Peer() { server_->shutdown(); }
    std::string addr() const { return "127.0.0.1:" + std::to_string(server_->port()); }
    std::vector<RemotingCommand> requests() {
        std::lock_guard<std::mutex> l(mu_);
        return requests_;
    }

private:
    Answer answer_;
    std::unique_ptr<net::RemotingServer> server_;
    std::mutex mu_;
    std::vector<RemotingCommand> requests_;
};

TEST(EscapeRemote, RouteFromNameServerThenSendToOtherMaster) {
    Peer master(Req::kSendMessageV2, [](const RemotingCommand& req) {
        auto resp = RemotingCommand::response_to(req, RC::kSuccess);
        resp.set_ext("msgId", "0A000004000000000000000000000000");
        resp.set_ext("queueId", "0");
        resp.set_ext("queueOffset", "0");
        return resp;
    });
    const std::string master_addr = master.addr();
    Peer namesrv(Req::kGetRouteinfoByTopic, [master_addr](const RemotingCommand& req) {
        const std::string* topic = req.ext("topic");
        if (topic == nullptr || *topic != "%RETRY%G") {
            return RemotingCommand::response_to(req, RC::kTopicNotExist, "no topic route");
        }
        protocol::TopicRouteData route;
        protocol::QueueData own;
        own.broker_name = "b1";
        own.read_queue_nums = own.write_queue_nums = 1;
        own.perm = 6;
        protocol::QueueData other = own;
        other.broker_name = "b2";
        route.queue_datas = {own, other};
        protocol::BrokerData b1;
        b1.cluster = "C";
        b1.broker_name = "b1";
        b1.broker_addrs = {{1, "127.0.0.1:1"}};
        protocol::BrokerData b2 = b1;
        b2.broker_name = "b2";
        b2.broker_addrs = {{0, master_addr}};
        route.broker_datas = {b1, b2};
        auto resp = RemotingCommand::response_to(req, RC::kSuccess);
        resp.body = route.encode();
        return resp;
    });

    net::RemotingClient client;
    client.start();
    // The first name server refuses connections (port 1): the second one answers.
    const std::vector<std::string> namesrvs = {"127.0.0.1:1", namesrv.addr()};
    EscapeBridge bridge("b1",
                        EscapeBridge::remote_network(
                            &client, [namesrvs] { return namesrvs; }, std::chrono::seconds(3)));
    protocol::MessageExt msg;
    msg.topic = "%RETRY%G";
    msg.body = "hello";
    msg.reconsume_times = 1;
    msg.set_property("DELAY", "3");
    auto r = bridge.escape(msg);
    ASSERT_TRUE(r.is_ok()) << r.status().to_string();
    EXPECT_EQ(r.value().code, RC::kSuccess);
    auto sent = master.requests();
    ASSERT_EQ(sent.size(), 1u);
    EXPECT_EQ(sent[0].body, "hello");
    auto h = protocol::decode_send_message_header(sent[0]);
    ASSERT_TRUE(h.is_ok());
    EXPECT_EQ(h.value().topic, "%RETRY%G");
    EXPECT_EQ(h.value().broker_name, "b2");

    // A topic the name server does not know: kNotFound naming it, nothing sent.
    msg.topic = "%DLQ%G";
    auto none = bridge.escape(msg);
    ASSERT_FALSE(none.is_ok());
    EXPECT_EQ(none.status().code(), Errc::kNotFound);
    EXPECT_NE(none.status().message().find("%DLQ%G"), std::string::npos);
    EXPECT_EQ(master.requests().size(), 1u);
    client.shutdown();
}

}  // namespace
}  // namespace comet::broker
