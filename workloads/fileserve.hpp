// fileserve: a file server on the node that holds the SSD's file system
// answers requests from clients on the other nodes (README.md "File
// serving"). Each client sends requests (a whole file or a range, files
// drawn uniform or Zipf) as small two-sided messages (msg::Endpoint, eager);
// the server answers each by RDMA-writing the data into the client's
// registered receive area, then a small reply message; the client checks
// every byte against FileSystem::byte. How the server moves the data is
// `fileserve.method`:
//
//   read-copy    read() into one bounce buffer registered once, then write it
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
#pragma once

#include <cstdint>
#include <map>
#include <memory>
#include <random>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "core/metrics.hpp"
#include "workloads/workload.hpp"

namespace vrdmasim {

class FileSystem;
namespace msg {
class Endpoint;
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
};

class FileserveWorkload : public Workload {
public:
    enum class Method { ReadCopy, Pipeline, Sendfile, MmapFault, KernelCopy };
    static void declare_params(ParamRegistry& reg);
    static void declare_metrics(MetricRegistry& reg);
    // `files[n]`: node n's file system (nullptr on a node without one); the
    // server runs on the first node that has one.
    FileserveWorkload(const SimContext& ctx, const std::vector<RdmaProcess*>& apps, const std::vector<FileSystem*>& files);
    ~FileserveWorkload() override;
    std::string kind() const override { return "fileserve"; }
    bool finished() const override { return done_ == clients_.size() + 1; }
    // The self-checks (src/invariants.cpp): (invariant, detail) per violation.
    std::vector<std::pair<std::string, std::string>> self_check() const;

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

private:
    struct Served {
        bool ok = false;
        std::uint64_t bytes = 0;
    };
    void server(RdmaProcess& app);
    void client(RdmaProcess& app, unsigned index);
    void warm(RdmaProcess& app);
    // The methods (fileserve_methods.cpp): data of `w` to `dst` of `node`.
    Served read_copy(RdmaProcess& app, const Wire& w, unsigned node, std::uint64_t dst);
    Served pipeline(RdmaProcess& app, const Wire& w, unsigned node, std::uint64_t dst);
    Served sendfile(RdmaProcess& app, const Wire& w, unsigned node, std::uint64_t dst);
    Served mmap_fault(RdmaProcess& app, const Wire& w, unsigned node, std::uint64_t dst);
    Served kernel_copy(RdmaProcess& app, const Wire& w, unsigned node, std::uint64_t dst);
    // One RDMA write of the server, posted again while the queue is full
    // (waiting for `oldest`'s record); false if the engine refused it for
    // another reason.
    bool post(RdmaProcess& app, std::uint64_t src, unsigned node, std::uint64_t dst, std::uint64_t len, std::uint64_t record,
              std::uint32_t flags = 0, std::uint32_t counter = 0);
    // A Vm call's end: the server's clock moves to it.
    void vm_done(RdmaProcess& app, const VmResult& r, const char* what);
    // Slice on the server's app track.
    void slice(RdmaProcess& app, const char* name, sc_core::sc_time start, const std::string& args);
    Wire draw(unsigned client, std::uint64_t k, std::mt19937_64& rng) const;
    bool verify(RdmaProcess& app, std::uint64_t addr, const Wire& w, std::uint64_t bytes);
    void unpin_all(RdmaProcess& app);
    std::uint64_t stat_now(const std::string& name) const;

    const Method method_;
    RdmaProcess* server_ = nullptr;
    FileSystem* fs_ = nullptr;
    std::vector<RdmaProcess*> clients_;
    std::vector<unsigned> client_nodes_;
    std::vector<std::unique_ptr<msg::Endpoint>> owned_;
    std::vector<msg::Endpoint*> eps_;   // by node
    unsigned files_ = 0;
    std::uint64_t file_size_ = 0, req_ = 0, span_ = 0, chunk_ = 0, packet_ = 0, window_ = 0;
    std::uint64_t requests_ = 0, outstanding_ = 0, nbuf_ = 0;
    bool zipf_ = false, warm_ = true, sendfile_cache_ = false;
    double zipf_s_ = 0;
    std::vector<double> zipf_cdf_;
    std::uint64_t seed_fs_ = 0;
    sc_core::sc_time tx_cost_, rx_cost_;
    unsigned done_ = 0;
    // Server state
    std::vector<int> fds_;
    std::vector<std::uint64_t> maps_;                    // file mapping per file (sendfile, mmap-fault)
    std::uint64_t bounce_ = 0, records_ = 0, sockbuf_ = 0;
    std::set<std::pair<unsigned, std::uint64_t>> cached_pins_;   // sendfile-cache: pages kept pinned
    std::vector<std::uint64_t> rx_area_;                 // per client: its receive area (slots of span_)
    std::vector<std::uint64_t> kbuf_;                    // per client (kernel-copy): its kernel receive buffer
    std::vector<std::uint64_t> answers_;                 // per request id: replies the client took
    std::uint64_t pinned_left_ = 0;                      // cache pages still pinned at the server's end
    std::string server_group_;
    double cpu0_ = 0, poll0_ = 0;
    std::uint64_t misses0_ = 0, ssd_bytes0_ = 0, ssd_reads0_ = 0, major0_ = 0;
    Counter &requests_c_, &answered_, &served_bytes_, &copy_bytes_, &pins_, &ssd_reads_, &ssd_bytes_, &major_,
        &missed_bytes_, &packets_, &duplicates_;
    Scalar &reg_time_, &server_cpu_, &cpu_per_byte_;
};

}  // namespace vrdmasim
