// A program outside the tree: links the installed libsgpu (find_package(sgpu) or pkg-config),
// opens the "mock" transport through a TransportRegistry, brings a Device up on it and submits
// one DMA buffer; asks the "pcie" backend for a card that is not there. Exits 0 when everything
// behaved; prints what did not otherwise.
#include <cstdio>
#include <memory>
#include <string>

#include "sgpu/device.hpp"
#include "sgpu/packet_writer.hpp"
#include "sgpu/regs.hpp"
#include "sgpu/transport/mock.hpp"
#include "sgpu/transport/registry.hpp"

namespace {

int fail(const char* what, const sgpu::Error& e) {
  std::fprintf(stderr, "consumer: %s: %s\n", what, to_string(e).c_str());
  return 1;
}

}  // namespace

int main() {
  sgpu::TransportRegistry registry;
  if (registry.contains("sim")) return std::fprintf(stderr, "consumer: the installed library knows 'sim'\n"), 1;
  // The real "pcie" backend (libpciaccess linked through the package): no card at this address.
  auto card = registry.open("pcie:7f:1f.7");
  if (card || card.error().message.find("no PCI function at 0000:7f:1f.7") == std::string::npos)
    return std::fprintf(stderr, "consumer: pcie:7f:1f.7 did not say there is no card there: %s\n",
                        card ? "it opened" : to_string(card.error()).c_str()),
           1;
  auto transport = registry.open("mock");
  if (!transport) return fail("open mock", transport.error());
  auto* mock = dynamic_cast<sgpu::MockTransport*>(transport->get());
  if (mock == nullptr) return std::fprintf(stderr, "consumer: 'mock' is not a MockTransport\n"), 1;
  mock->load_reset_values();

  auto device = sgpu::Device::open(std::move(*transport));
  if (!device) return fail("open the device", device.error());
  auto buffer = device->transport().alloc_dma(4096);
  if (!buffer) return fail("alloc_dma", buffer.error());
  sgpu::PacketWriter writer(*buffer);
  if (auto s = writer.nop(4); !s) return fail("write a NOP", s.error());

  mock->clear_log();
  sgpu::Submission submission;
  submission.buffer = &*buffer;
  submission.end_offset = writer.offset();
  submission.flags = sgpu::abi::ring_flags::kPrivileged;
  auto fence = device->submit(submission, sgpu::RingFence{1});
  if (!fence) return fail("submit", fence.error());
  const auto writes = mock->writes();
  if (*fence != 1 || writes.size() != 1 || writes[0] != sgpu::MockTransport::write(SGPU_REG(RING_TAIL), 1))
    return std::fprintf(stderr, "consumer: submit did not ring the doorbell once with tail 1\n"), 1;
  std::printf("consumer: libsgpu %s works from outside the tree (ring fence %llu submitted)\n",
              std::string(device->transport().name()).c_str(), static_cast<unsigned long long>(fence->value()));
  return 0;
}
