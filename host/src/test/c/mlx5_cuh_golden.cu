// Host build of gda4j/layout/mlx5.cuh's encoders for Mlx5CuhTest: the same functions the GPU runs (with the host byte
// swap in place of __byte_perm), writing the golden cases so the Java test can compare them byte for byte.
//
//   mlx5_cuh_golden cases < golden-cases.txt   prints "<name> <hex>" for the WQE, dbr and doorbell cases
//   mlx5_cuh_golden tails                      reads "<name> <hex of CQE bytes 56..63> <cqe_index> <cqe_count>",
//                                              prints "<name> opcode=.. owner=.. qpn=.. wqe_counter=..
//                                              s_wqe_opcode=.. fresh=.."
//
// Built with: nvcc -std=c++17 -I device-ptx/include mlx5_cuh_golden.cu
#include <gda4j/layout/mlx5.cuh>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <iostream>
#include <map>
#include <sstream>
#include <string>
#include <vector>

using namespace gda4j::mlx5;

namespace {

constexpr uint32_t RING_WQEBBS = 16;

struct Case {
    std::string kind;
    std::map<std::string, std::string> fields;

    const std::string &text(const std::string &key) const {
        auto it = fields.find(key);
        if (it == fields.end()) {
            std::cerr << "mlx5_cuh_golden: case " << kind << " lacks " << key << "\n";
            std::exit(2);
        }
        return it->second;
    }
    uint64_t number(const std::string &key) const { return std::strtoull(text(key).c_str(), nullptr, 0); }
    uint32_t u32(const std::string &key) const { return (uint32_t)number(key); }
};

std::vector<uint8_t> payload(const Case &c) {
    const std::string &value = c.text("payload");
    std::vector<uint8_t> bytes;
    if (value == "-") {
        return bytes;
    }
    if (value.rfind("pattern:", 0) == 0) {
        size_t n = std::strtoul(value.c_str() + 8, nullptr, 10);
        for (size_t i = 0; i < n; ++i) {
            bytes.push_back((uint8_t)(i * 37 + 11));
        }
        return bytes;
    }
    for (size_t i = 0; i + 1 < value.size(); i += 2) {
        bytes.push_back((uint8_t)std::strtoul(value.substr(i, 2).c_str(), nullptr, 16));
    }
    return bytes;
}

void print_hex(const std::string &name, const uint8_t *bytes, size_t n) {
    std::printf("%s ", name.c_str());
    for (size_t i = 0; i < n; ++i) {
        std::printf("%02x", bytes[i]);
    }
    std::printf("\n");
}

void run_case(const Case &c) {
    alignas(64) static uint8_t ring[RING_WQEBBS * WqeDescriptor::WQEBB_SIZE];
    std::memset(ring, 0xa5, sizeof(ring));
    const std::string &name = c.text("name");
    if (c.kind == "dbr") {
        alignas(8) uint32_t dbrec[2] = {0, 0};
        dbrec[DoorbellRecordDescriptor::SND_DBR] = dbr_send_counter(c.number("pi"));
        print_hex(name, reinterpret_cast<uint8_t *>(dbrec), sizeof(dbrec));
        return;
    }
    if (c.kind == "doorbell") {
        uint64_t value = doorbell_value(c.number("pi"), c.u32("qpn"));
        uint8_t bytes[8];
        std::memcpy(bytes, &value, sizeof(bytes));
        print_hex(name, bytes, sizeof(bytes));
        return;
    }
    if (c.kind == "cqe" || c.kind == "err_cqe") {
        return;  // the header reads CQEs; the "tails" mode checks that
    }
    uint64_t index = c.number("wqe_index");
    uint32_t qpn = c.u32("qpn");
    uint8_t fm = (uint8_t)c.number("fm_ce_se");
    if (c.kind == "nop") {
        write_nop(ring, RING_WQEBBS, index, qpn, fm);
    } else if (c.kind == "write") {
        write_rdma_write(ring, RING_WQEBBS, index, qpn, fm, c.number("raddr"), c.u32("rkey"), c.number("addr"),
                         c.u32("lkey"), c.u32("byte_count"));
    } else if (c.kind == "write_imm") {
        write_rdma_write_imm(ring, RING_WQEBBS, index, qpn, fm, c.u32("imm"), c.number("raddr"), c.u32("rkey"),
                             c.number("addr"), c.u32("lkey"), c.u32("byte_count"));
    } else if (c.kind == "read") {
        write_rdma_read(ring, RING_WQEBBS, index, qpn, fm, c.number("raddr"), c.u32("rkey"), c.number("addr"),
                        c.u32("lkey"), c.u32("byte_count"));
    } else if (c.kind == "write_inline") {
        std::vector<uint8_t> bytes = payload(c);
        write_rdma_write_inline(ring, RING_WQEBBS, index, qpn, fm, c.number("raddr"), c.u32("rkey"), bytes.data(),
                                (uint32_t)bytes.size());
    } else if (c.kind == "fetch_add") {
        write_atomic_fetch_add(ring, RING_WQEBBS, index, qpn, fm, c.number("raddr"), c.u32("rkey"),
                               c.number("swap_add"), c.number("addr"), c.u32("lkey"));
    } else if (c.kind == "compare_swap") {
        write_atomic_compare_swap(ring, RING_WQEBBS, index, qpn, fm, c.number("raddr"), c.u32("rkey"),
                                  c.number("compare"), c.number("swap_add"), c.number("addr"), c.u32("lkey"));
    } else {
        std::cerr << "mlx5_cuh_golden: unknown kind " << c.kind << "\n";
        std::exit(2);
    }
    // ds * 16 bytes from the ctrl segment on, in ring order.
    uint32_t ctrl = WqeDescriptor::segment_offset(index, 0, RING_WQEBBS);
    uint32_t ds = ring[ctrl + WqeDescriptor::CTRL_QPN_DS_OFFSET + 3] & WqeDescriptor::DS_MASK;
    std::vector<uint8_t> wqe;
    for (uint32_t b = 0; b < ds * WqeDescriptor::SEGMENT_SIZE; ++b) {
        wqe.push_back(ring[WqeDescriptor::wqebb_offset(index + b / WqeDescriptor::WQEBB_SIZE, RING_WQEBBS)
                           + b % WqeDescriptor::WQEBB_SIZE]);
    }
    print_hex(name, wqe.data(), wqe.size());
}

int cases() {
    std::string line;
    while (std::getline(std::cin, line)) {
        std::istringstream tokens(line);
        Case c;
        std::string token;
        if (!(tokens >> c.kind) || c.kind[0] == '#') {
            continue;
        }
        while (tokens >> token) {
            size_t eq = token.find('=');
            c.fields[token.substr(0, eq)] = token.substr(eq + 1);
        }
        run_case(c);
    }
    return 0;
}

int tails() {
    std::string name, hex;
    uint64_t index, count;
    while (std::cin >> name >> hex >> index >> count) {
        uint8_t bytes[8];
        for (int i = 0; i < 8; ++i) {
            bytes[i] = (uint8_t)std::strtoul(hex.substr(2 * i, 2).c_str(), nullptr, 16);
        }
        uint64_t tail;
        std::memcpy(&tail, bytes, sizeof(tail));  // what ld.acquire.sys.b64 yields on the little-endian GPU
        std::printf("%s opcode=%u owner=%u qpn=%u wqe_counter=%u s_wqe_opcode=%u fresh=%d\n", name.c_str(),
                    cqe_tail_opcode(tail), cqe_tail_owner(tail), cqe_tail_qpn(tail), cqe_tail_wqe_counter(tail),
                    cqe_tail_s_wqe_opcode(tail), cqe_tail_is_fresh(tail, index, (uint32_t)count) ? 1 : 0);
    }
    return 0;
}

}  // namespace

int main(int argc, char **argv) {
    if (argc == 2 && std::strcmp(argv[1], "cases") == 0) {
        return cases();
    }
    if (argc == 2 && std::strcmp(argv[1], "tails") == 0) {
        return tails();
    }
    std::cerr << "usage: mlx5_cuh_golden cases|tails\n";
    return 2;
}
