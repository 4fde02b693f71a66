// fileserve: a file server on the node that holds the SSD's file system
// answers requests from clients on the other nodes (README.md "File
// serving"). Each client sends requests (a whole file or a range, files
// drawn uniform or Zipf) as small two-sided messages (msg::Endpoint, eager);
// the server serves up to fileserve.server-depth of them at once (an event
// loop over its requests and its transfers' records), RDMA-writing the data
// into the client's registered receive area (workload.operation = write) or
// preparing it for the client's RDMA read (read), then a small reply
// message (pipeline's read form: a message per chunk, each read by the
// client, which says Done before its buffer is reused); the client checks
// every byte against FileSystem::byte. How the server moves the data is
// `fileserve.method`:
//
//   read-copy    read() into a bounce buffer registered once, then write it
//   pipeline     read() and register chunk k+1 into the next of
//                fileserve.buffers bounce buffers while chunk k is on the wire
//   sendfile     no copy: the page-cache pages are pinned (Vm::pin_file) and
//                mapped, and written from the file mapping; unpinned after
//                the completion, or kept pinned (fileserve.sendfile-cache)
//   mmap-fault   the file mapping (not populated) posted as it is to the
//                fault-tolerant engine: uncached pages fault in the SMMU
//                and the fault library brings them from the SSD
//   kernel-copy  a socket-like kernel path per packet: the kernel copies from
//                the page cache into a pinned socket buffer, the engine sends
//                it, the client's kernel copies each packet to the user
//                buffer (two copies, per-packet protocol costs)
//
// fileserve.access = direct: no server; each client read()s the files
// through its own kernel, whose page cache fills over the board network
// from the SSD's FPGA (models/os RemoteBlock) when the client's FPGA has no
// SSD.
#pragma once

#include <cstdint>
#include <deque>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "src/core/metrics.hpp"
#include "workloads/workload.hpp"

namespace vrdmasim {

class FileSystem;
namespace msg {
class Endpoint;
struct Status;
}

struct FileserveParams {
    FileserveParams();
    ParamSet set;
    IntParam clients;
    SizeParam request_size;
    EnumParam popularity;
    RealParam zipf_exponent;
    IntParam seed;
    IntParam requests;
    IntParam outstanding;
    EnumParam cache;
    EnumParam method;
    SizeParam chunk;
    IntParam buffers;
    BoolParam sendfile_cache;
    SizeParam kernel_packet;
    TimeParam kernel_tx_cost;
    TimeParam kernel_rx_cost;
    SizeParam socket_buffer;
    IntParam server_depth;
    EnumParam access;
};

class FileserveWorkload : public Workload {
public:
    enum class Method { ReadCopy, Pipeline, Sendfile, MmapFault, KernelCopy };
    static void declare_params(ParamRegistry& reg);
    static void declare_metrics(MetricRegistry& reg);
    // `files[n]`: node n's file system (nullptr on a node without one); the
    // server is process `job` of the first node that has one.
    FileserveWorkload(const SimContext& ctx, const std::vector<RdmaProcess*>& apps,
                      const std::vector<FileSystem*>& files, unsigned job = 0);
    ~FileserveWorkload() override;
    std::string kind() const override { return "fileserve"; }
    std::string partition_refusal() const override;
    bool finished() const override { return done_ == clients_.size() + 1; }
    // The progress line's total (the self-check planned-transfers holds it
    // to what the run finished), known from the start: each client finishes
    // fileserve.requests requests, whatever the method, the access (direct:
    // its read()s) or the operation; an error reply counts as finished too.
    std::uint64_t planned_transfers() const override { return clients_.size() * requests_; }
    // The bytes those requests deliver to the clients, none failing: every
    // range is fileserve.request-size long (or the whole file: draw() takes
    // a whole range of the files' one size), whether it crosses the network
    // or not (direct access: the client's read() copy; a warm page cache
    // changes where the server reads from, not what the client receives),
    // whatever the method or the operation.
    std::int64_t planned_bytes() const override {
        return static_cast<std::int64_t>(clients_.size() * requests_ * req_);
    }
    // direct: every byte is one client's read() copy, at vm.copy-rate.
    double local_ceiling_bps() const override;
    // The self-checks (src/sim/invariants.cpp): (invariant, detail) per violation.
    std::vector<std::pair<std::string, std::string>> self_check() const override;
    // With node.processes > 1 every job's workload joins the first job's
    // (System): the node-wide figures (the cores' CPU, page-cache misses,
    // SSD reads, pins left) are measured once, from the first job's start
    // to the last job's end, into the first job's statistics.
    void join(Workload& first) override;

    // One request as it travels (the eager message's payload).
    struct Wire {
        std::uint64_t id = 0;
        std::uint32_t file = 0, slot = 0;
        std::uint64_t offset = 0, len = 0;
    };
    struct Reply {
        std::uint64_t id = 0;
        std::uint64_t status = 0;   // kStatusOk / kStatusError
        std::uint64_t bytes = 0;
    };
    // workload.operation = read: the reply names where the client reads.
    struct ReadReply {
        std::uint64_t id = 0, status = 0, bytes = 0, src = 0;
    };
    // workload.operation = read: the client's word that its read is done.
    struct Done {
        std::uint64_t id = 0, bytes = 0;
    };

private:
    // Message tags: requests (client -> server), replies (+ the client's
    // slot), the read form's Done (client -> server, + slot).
    static constexpr std::uint64_t kRequestTag = 1, kReplyTag = 16, kDoneTag = 128;
    // One request the server is serving (a job slot: its bounce buffers,
    // socket buffer and completion records are the slot's).
    struct Part {
        std::uint64_t record = 0, buf = 0, len = 0;
        std::uint64_t index = 0;   // the buffer (pipeline) or socket-buffer packet (kernel-copy) of the slot
        sc_core::sc_time posted;   // its record is this post's once written later than this
        // pipeline's read form: the receive of the client's Done for the
        // chunk (its buffer is the client's until then) and the buffer's guard.
        std::uint64_t done = 0, guard = 0;
    };
    struct Job {
        bool active = false;
        unsigned slot = 0;   // its job slot
        Tracer::Cause story;   // the request's arrival (its receive's step): serving it follows
        Wire w;
        unsigned node = 0;   // the client's node
        std::size_t client = 0;
        std::size_t recv = 0;   // its receive among the server's (inbox slot at[recv])
        std::uint64_t dst = 0;   // where the data goes at the client
        std::uint64_t src = 0;   // one-part methods: where it comes from
        std::uint64_t parts = 0, next = 0;
        std::deque<Part> flight;   // posted, record not seen yet (oldest first)
        std::vector<bool> busy;   // pipeline: buffers; kernel-copy: socket-buffer packets
        bool ok = true, pinned = false;
        bool held = false;   // sendfile-cache: its pages counted in use (in_use_)
        std::uint64_t bytes = 0;
        sc_core::sc_time t0;
        // workload.operation = read: the reply sent with the data's place,
        // then the client's Done awaited.
        bool replied = false, awaiting = false;
        std::uint64_t done_req = 0, guard = 0;
    };
    // The node-wide figures of the measured phase (join()).
    struct Meter {
        FileserveWorkload* owner = nullptr;   // the first job's: its statistics
        unsigned parties = 0, begun = 0, ended = 0, released = 0;
        std::vector<std::string> cpu_groups;   // nodes whose cores and page caches serve the data
        std::vector<std::string> ssd_groups;   // nodes whose SSDs fill those page caches
        Vm* pin_vm = nullptr;   // whose file pins must be gone at the end (server access)
        double cpu0 = 0, poll0 = 0;
        std::uint64_t misses0 = 0, major0 = 0, ssd_reads0 = 0, ssd_bytes0 = 0;
        std::uint64_t served = 0;   // every job's bytes
        std::uint64_t starved = 0;   // every job's read() calls short (or ENOMEM) and file pins refused
    };
    // The constructor's parts: refuse what is not built (the settings alone),
    // take the server (first node with files) and the clients, read the
    // request and method settings (refusing those that do not fit), check
    // that the buffers fit in the processes' memory, and make the meter.
    void refuse_compositions(const Config& c) const;
    std::vector<std::string> choose_server_and_clients(const Config& c, const std::vector<RdmaProcess*>& apps,
                                                       const std::vector<FileSystem*>& files);   // the SSDs' nodes
    void read_settings(const Config& c);
    void check_memory(const Config& c);
    void make_meter(const std::vector<std::string>& ssd_groups);
    void server(RdmaProcess& app);
    // The server's parts (fileserve_server.cpp): its setup, and the loop
    // that serves the requests.
    struct ServerSetup {
        std::uint64_t pins0 = 0, ep_pins = 0, slots = 0, inbox = 0;
    };
    ServerSetup server_setup(RdmaProcess& app, msg::Endpoint& ep);
    class ServeLoop;
    friend class ServeLoop;
    void client(RdmaProcess& app, unsigned index);
    class ClientLoop;   // a client's requests (fileserve.cpp)
    friend class ClientLoop;
    void direct_client(RdmaProcess& app, unsigned index);
    void warm(RdmaProcess& app, const std::vector<int>& fds);
    // The measured phase of one of the meter's parties begins / ends.
    void meter_begin();
    void meter_end(std::uint64_t served);
    // ... and it has let go of what it pinned: after the last, no pin may be left.
    void meter_released();
    // The server's event loop (fileserve_server.cpp).
    void start_job(RdmaProcess& app, Job& j, const msg::Status& st, const Wire& w, std::size_t recv);
    void pump(RdmaProcess& app, Job& j);
    bool reap_written(RdmaProcess& app, Job& j);
    bool written(RdmaProcess& app, const Part& p) const;
    void reap(RdmaProcess& app, Job& j);
    bool job_done(const Job& j) const;
    void finish_job(RdmaProcess& app, Job& j);
    void send_reply(RdmaProcess& app, const Job& j, bool ok, std::uint64_t bytes, std::uint64_t src);
    std::uint64_t record_of(const Job& j, std::uint64_t index) const;
    std::uint64_t part_buffer(const Job& j, std::uint64_t index) const;
    // The methods (fileserve_methods.cpp): the request's CPU work before
    // its data moves, each part's, and the end of a part and of the request.
    void prepare(RdmaProcess& app, Job& j);
    void prepare_sendfile(RdmaProcess& app, Job& j);
    bool pin_file_range(RdmaProcess& app, int fd, std::uint64_t off, std::uint64_t len);
    bool pin_through_cache(RdmaProcess& app, Job& j, std::uint64_t span);
    bool post_part(RdmaProcess& app, Job& j);
    bool fill_part(RdmaProcess& app, Job& j, const Part& p, std::uint64_t off, std::uint64_t len);
    // pipeline's read form: chunk p is ready in its buffer; the client is told.
    void hand_over(RdmaProcess& app, Job& j, Part& p);
    // What a part moved: its write's record, or (pipeline's read form) the client's Done.
    CompletionRecord outcome(RdmaProcess& app, const Job& j, const Part& p);
    // pipeline's read form: the client reads chunk by chunk, through the
    // server's fileserve.buffers bounce buffers.
    bool chunk_reads() const { return read_ && method_ == Method::Pipeline; }
    // A client's read completion records per slot.
    std::uint64_t reads_per_slot() const { return chunk_reads() ? nbuf_ : 1; }
    void part_done(RdmaProcess& app, Job& j, const Part& p, const CompletionRecord& rec);
    void release(RdmaProcess& app, Job& j);
    // One RDMA write of the server, posted again while the queue is full
    // (waiting for a completion); false if the engine refused it for
    // another reason.
    bool post(RdmaProcess& app, std::uint64_t src, unsigned node, std::uint64_t dst, std::uint64_t len,
              std::uint64_t record, std::uint32_t flags = 0, std::uint32_t counter = 0);
    // A Vm call's end: the server's clock moves to it.
    void vm_done(RdmaProcess& app, const VmResult& r, const char* what);
    // A read() of a request's data (the server's, or a direct client's):
    // the bytes it copied; fewer than `len` (none on ENOMEM) fail the request.
    std::uint64_t read_file(RdmaProcess& app, int fd, std::uint64_t off, std::uint64_t len, std::uint64_t buf,
                            const char* what);
    // Slice on the server's app track (`lane` > 0: a job slot's own track).
    void slice(RdmaProcess& app, const char* name, sc_core::sc_time start, const std::string& args, unsigned lane = 0);
    Wire draw(unsigned client, std::uint64_t k, std::mt19937_64& rng) const;
    bool verify(RdmaProcess& app, std::uint64_t addr, const Wire& w, std::uint64_t bytes);
    // Unpin the pin-down cache's pages; `spare_in_use`: not those a request
    // being served is sending (in_use_).
    void unpin_all(RdmaProcess& app, bool spare_in_use = false);
    std::uint64_t stat_now(const std::string& name) const;
    double scalar_now(const std::string& name) const;
    std::string describe(const Wire& w, unsigned node) const;
    // The node's statistics group of a process ("node1" for "node1.proc1").
    static std::string node_group(const RdmaProcess& app);

    const Method method_;
    const bool read_, direct_, guard_;
    RdmaProcess* server_ = nullptr;
    FileSystem* fs_ = nullptr;
    std::vector<RdmaProcess*> clients_;
    std::vector<unsigned> client_nodes_;
    std::vector<unsigned> ssd_nodes_;   // every node with the SSD's files (the meter's, direct access)
    std::vector<std::unique_ptr<msg::Endpoint>> owned_;
    std::vector<msg::Endpoint*> eps_;   // by node
    unsigned files_ = 0;
    std::uint64_t file_size_ = 0, req_ = 0, span_ = 0, chunk_ = 0, packet_ = 0, window_ = 0;
    std::uint64_t requests_ = 0, outstanding_ = 0, nbuf_ = 0, depth_ = 1, per_job_ = 1;
    bool zipf_ = false, warm_ = true, sendfile_cache_ = false;
    double zipf_s_ = 0;
    std::vector<double> zipf_cdf_;
    std::uint64_t seed_fs_ = 0;
    sc_core::sc_time tx_cost_, rx_cost_;
    unsigned done_ = 0;
    std::shared_ptr<Meter> meter_;
    // Server state
    std::vector<int> fds_;
    std::vector<std::uint64_t> maps_;   // file mapping per file (sendfile, mmap-fault)
    std::uint64_t bounce_ = 0, records_ = 0, sockbuf_ = 0, donebox_ = 0, outbox_ = 0;
    std::uint64_t file_pins_ = 0;   // pages pin_file pinned (sendfile)
    std::set<std::pair<unsigned, std::uint64_t>> cached_pins_;   // sendfile-cache: pages kept pinned
    std::map<std::pair<unsigned, std::uint64_t>, unsigned> in_use_;   // of those, pages requests being served send
    std::vector<std::uint64_t> rx_area_;   // per client: its receive area (slots of span_)
    std::vector<std::uint64_t> kbuf_;   // per client (kernel-copy): its kernel receive buffer
    std::vector<std::uint64_t> answers_;   // per request id: replies the client took
    std::uint64_t pinned_left_ = 0;   // cache pages still pinned at the last server's end
    std::string server_group_;
    Counter &requests_c_, &answered_, &served_bytes_, &copy_bytes_, &pins_, &ssd_reads_, &ssd_bytes_, &major_,
        &missed_bytes_, &packets_, &duplicates_, &short_reads_, &pins_refused_;
    Scalar &reg_time_, &server_cpu_, &cpu_per_byte_, &concurrent_peak_;
};

}   // namespace vrdmasim
