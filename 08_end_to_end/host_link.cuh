// host_link.cuh - the link between the host and the GPU, as the device reports it: what part 1's
// copies are measured against.
//
// The GPU hangs on a PCI Express link (or, on Grace Hopper, on NVLink-C2C to the CPU). Its rate
// per direction is  transfers per second x lanes x encoding efficiency / 8 bits:
//   PCIe 1 and 2:   2.5 and 5 GT/s per lane, 8b/10b encoding    (80% of the bits are data)
//   PCIe 3, 4, 5:   8, 16, 32 GT/s per lane, 128b/130b encoding (98.5%)
//   PCIe 6:         64 GT/s per lane, FLIT mode, 242 data bytes of every 256
// so PCIe 5 x16 carries at most 32 * 16 * 128/130 / 8 = 63.0 GB/s each way, before the packet
// headers of the protocol (a DMA reaches about 85-90% of it).
//
// How it is read here: cudaDeviceGetPCIBusId gives the GPU's PCI address; Linux publishes the
// negotiated link of that device in /sys/bus/pci/devices/<address>/current_link_speed ("32.0 GT/s
// PCIe") and current_link_width ("16"), and what both ends could do in max_link_speed/width. An
// idle link may train down to save power, so both are shown. A GPU whose pageable host memory is
// reached through the host's page tables (cudaDevAttrPageableMemoryAccessUsesHostPageTables) sits
// on a cache-coherent link: NVLink-C2C on Grace Hopper, where the PCIe numbers do not apply.
#pragma once

#include <cuda_runtime.h>

#include <cctype>
#include <cmath>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>

#include "cuda_check.cuh"

namespace ch08 {

// The generation that runs at `gts` GT/s per lane (0 when unknown).
inline int pcie_generation(double gts) {
    const double rates[] = {2.5, 5.0, 8.0, 16.0, 32.0, 64.0};
    for (int g = 0; g < 6; ++g)
        if (std::abs(gts - rates[g]) < 0.01 * rates[g]) return g + 1;
    return 0;
}

// Data bits per transferred bit for a generation.
inline double pcie_efficiency(int gen) {
    if (gen == 1 || gen == 2) return 8.0 / 10.0;
    if (gen >= 3 && gen <= 5) return 128.0 / 130.0;
    if (gen == 6) return 242.0 / 256.0;
    return 0.0;
}

// GB/s per direction of a link (0 when the generation is unknown).
inline double pcie_gbs(double gts, int width) {
    return gts * width * pcie_efficiency(pcie_generation(gts)) / 8.0;
}

// "32.0 GT/s PCIe" -> 32.0; "Unknown" or "" -> 0.
inline double parse_link_speed(const std::string& text) {
    size_t i = 0;
    while (i < text.size() && std::isspace(static_cast<unsigned char>(text[i]))) ++i;
    if (i == text.size() || !std::isdigit(static_cast<unsigned char>(text[i]))) return 0;
    try {
        return std::stod(text.substr(i));
    } catch (...) {
        return 0;
    }
}

struct LinkFacts {
    std::string bus_id;      // "0000:19:00.0"
    bool coherent = false;   // NVLink-C2C-style: pageable memory through the host page tables
    double cur_gts = 0, max_gts = 0;
    int cur_width = 0, max_width = 0;
    std::string how;         // where the numbers came from, or why there are none
    double cur_gbs() const { return pcie_gbs(cur_gts, cur_width); }
    double max_gbs() const { return pcie_gbs(max_gts, max_width); }
    // "PCIe 5 x16 (63.0 GB/s per direction)", or what is known.
    std::string describe() const;
};

inline std::string read_first_line(const std::string& path) {
    std::ifstream in(path);
    std::string line;
    if (in) std::getline(in, line);
    return line;
}

inline std::string LinkFacts::describe() const {
    char buf[200];
    if (coherent && max_gts == 0)
        return "cache-coherent host link (NVLink-C2C): pageable memory access uses the host page tables";
    if (max_gts == 0) return "unknown (" + how + ")";
    std::snprintf(buf, sizeof buf, "PCIe %d x%d (%.1f GB/s per direction); now trained at PCIe %d x%d (%.1f GB/s)",
                  pcie_generation(max_gts), max_width, max_gbs(), pcie_generation(cur_gts), cur_width, cur_gbs());
    return buf;
}

inline LinkFacts read_link(int dev) {
    LinkFacts f;
    char bus[32] = {};
    WB_CUDA_CHECK(cudaDeviceGetPCIBusId(bus, sizeof bus, dev));
    f.bus_id = bus;
    int coherent = 0;
    WB_CUDA_CHECK(cudaDeviceGetAttribute(&coherent, cudaDevAttrPageableMemoryAccessUsesHostPageTables, dev));
    f.coherent = coherent != 0;
    std::string lower = f.bus_id;
    for (char& c : lower) c = char(std::tolower(static_cast<unsigned char>(c)));
    const std::string dir = "/sys/bus/pci/devices/" + lower + "/";
    f.cur_gts = parse_link_speed(read_first_line(dir + "current_link_speed"));
    f.max_gts = parse_link_speed(read_first_line(dir + "max_link_speed"));
    const std::string cw = read_first_line(dir + "current_link_width"), mw = read_first_line(dir + "max_link_width");
    f.cur_width = parse_link_speed(cw) > 0 ? std::atoi(cw.c_str()) : 0;
    f.max_width = parse_link_speed(mw) > 0 ? std::atoi(mw.c_str()) : 0;
    f.how = f.max_gts > 0 ? "cudaDeviceGetPCIBusId + " + dir + "{current,max}_link_{speed,width}"
                          : "no link speed in " + dir + " (not Linux, or /sys not mounted)";
    return f;
}

}  // namespace ch08
