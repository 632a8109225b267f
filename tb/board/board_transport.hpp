// The host library's transport to a co-simulated PCIe board: register accesses become TLPs to
// BAR0, DMA buffers are host memory at bus addresses the board's DMA reaches, interrupts are
// MSIs, time is the board's simulated time.
//
// Opening does what the OS and a user-space driver do before the library uses the card:
// enumeration (BAR0, MSI, Max_Payload/Read_Request_Size, memory and bus mastering), then a
// check that every bus address this transport will hand out is within the device's reach as
// CAP_BUS.addr_bits reports it (the board shell reports its bridge's width there). A DMA window
// beyond the reach is refused at open time, with both numbers in the message.
#pragma once

#include <cstdint>
#include <memory>
#include <string>
#include <string_view>

#include "board/pci_function.hpp"
#include "board/s7_board.hpp"
#include "board/usp_board.hpp"
#include "sgpu/result.hpp"
#include "sgpu/transport.hpp"
#include "sgpu/transport/host_page_dma.hpp"

namespace sgpu::board {

struct BoardTransportOptions {
  /// Which board: "s7" (Artix-7 class, LitePCIe bridge) or "usp" (Alveo class, XDMA bridge).
  std::string shell = "s7";
  S7BoardConfig s7;
  UspBoardConfig usp;
  EnumerateOptions enumerate;
  /// Bus addresses of DMA buffers: [dma_base, dma_base + dma_size). The default is the sim
  /// backend's (from 4 GiB, so 64-bit addressing is exercised).
  std::uint64_t dma_base = HostPageDma::kDefaultBusBase;
  std::uint64_t dma_size = HostPageDma::kDefaultBusSize;
};

/// Opens a board transport; the error says what failed (enumeration, reach, unknown shell).
Result<std::unique_ptr<Transport>> open_board_transport(const BoardTransportOptions& options = {});

/// The "board" backend's factory (tb/backends registers it): "board" opens options.shell,
/// "board:s7" / "board:usp" that shell with the rest of the options.
Result<std::unique_ptr<Transport>> open_board_backend(const BoardTransportOptions& options, std::string_view shell);

/// The same, around a PCI function the caller made (tests give it a board with its own
/// configuration). The function must outlive the transport.
Result<std::unique_ptr<Transport>> open_board_transport(std::shared_ptr<PciFunction> function,
                                                        const BoardTransportOptions& options);

}  // namespace sgpu::board
