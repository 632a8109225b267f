#!/usr/bin/env python3
"""Generates softgpu's PCIe transaction layer for 7-series boards from LitePCIe (PyPI, pinned in
tools/requirements.txt), used as a library.

What LitePCIe provides here: the RX datapath of the 7-series hard block's AXI-Stream interface
(including the 128-bit start-of-packet aligner), the TLP depacketizer and packetizer (3- and
4-dword headers at 64/128-bit), the crossbar and the read-request controller (tags, completion
reordering buffers). What softgpu adds, in SystemVerilog (rtl/shell/): the AXI4 requester, the
BAR0 register bridge, MSI, clock-domain crossings.

LitePCIe's own user ports are not used (LitePCIeAXISlave ignores wstrb and carries 32-bit
addresses; the Wishbone master writes whole dwords). Instead this script exposes the crossbar's
raw request/completion streams as module ports and makes the byte enables travel with them:

  * request_layout gains first_be, last_be (the TLP header's byte enables) and dat_be (which
    dwords of a data beat are valid); completion_layout gains byte_count and dat_be;
  * the packetizer encodes first_be/last_be/byte_count from those fields instead of constants;
  * the depacketizer forwards the host's first_be/last_be with BAR requests, and ends a read
    on an error completion (UR/CA carry no data, so LitePCIe's length == byte count test would
    wait for data that never comes);
  * the 128-bit 3-dword header inserter is replaced: LitePCIe's shifts the data beats' byte
    enables by bits instead of dwords and never ends a packet early in its data state, so a
    3-dword-header TLP whose payload is not a multiple of four dwords (or a single dword) gets a
    wrong tkeep and a stray beat. LitePCIe's own users never send such TLPs (DMA payloads are
    whole beats, BAR completions one dword); byte-exact writes and 64-bit BAR reads do;
  * the 128-bit header extracter is replaced by one that takes a packet per beat count (no idle
    cycle per packet, a FIFO to absorb the completion controller's stall on each first beat) and
    sends the last dword of payloads of length 1 mod 4 (LitePCIe's drops it, and fills the upper
    byte enables from the wrong dword). Without this, 64-byte completions pass at 5/7 of the
    link's beat rate.

All are done before LitePCIe builds its modules (layout functions) or by adding combinational
statements after LitePCIe's own (Migen: the later assignment wins), and checked below, so a
LitePCIe upgrade that changes either fails the generation instead of silently dropping byte
enables. The co-simulation (tb/board) checks the byte enables end to end.

  gen_tlp_core.py --out build/gen/sgpu_litepcie_s7.v [--data-width 128] [--tags 8]
                  [--address-width 64] [--bar0-size 4096]
"""
import argparse
import os
import sys

# ---------------------------------------------------------------- layouts (before any import)
import litepcie.common as lpc
from litex.soc.interconnect.stream import EndpointDescription

_request_layout = lpc.request_layout
_completion_layout = lpc.completion_layout


def request_layout(data_width, address_width=32):
    d = _request_layout(data_width, address_width)
    return EndpointDescription(d.payload_layout + [("first_be", 4), ("last_be", 4), ("dat_be", data_width // 8)],
                               d.param_layout)


def completion_layout(data_width, address_width=32):
    d = _completion_layout(data_width, address_width)
    return EndpointDescription(d.payload_layout + [("byte_count", 12), ("dat_be", data_width // 8)], d.param_layout)


lpc.request_layout = request_layout
lpc.completion_layout = completion_layout

# LitePCIe's modules copy the layout functions at import (`from litepcie.common import *`), so
# they are imported only now.
from migen import Cat, ClockDomain, ClockSignal, Constant, Module, ResetSignal, Signal, If, NextState, NextValue  # noqa: E402
from migen.genlib.fsm import FSM  # noqa: E402
from migen.fhdl.verilog import convert  # noqa: E402
from litex.soc.interconnect import stream  # noqa: E402

import litepcie.tlp.depacketizer as lpd  # noqa: E402
import litepcie.tlp.packetizer as lpp  # noqa: E402
from litepcie.tlp.common import tlp_raw_layout  # noqa: E402
from litepcie.core.endpoint import LitePCIeEndpoint  # noqa: E402
from litepcie.phy.common import PHYRXDatapath, PHYTXDatapath  # noqa: E402
from litepcie.common import phy_layout, msi_layout, get_bar_mask  # noqa: E402


class HeaderInserter128b3DWs(Module):
    """3-dword header + payload on a 128-bit stream: beat 0 is {H0, H1, H2, D0}, then the payload
    continues three dwords behind. The payload's valid dwords are a prefix of each beat (its
    byte enables, four per dword); the packet ends with the last valid dword, so a payload of
    any length gets exactly the beats and the tkeep it needs."""

    def __init__(self):
        self.sink = sink = stream.Endpoint(tlp_raw_layout(128))
        self.source = source = stream.Endpoint(phy_layout(128))
        carry = Signal(96, reset_less=True)      # payload dwords 1..3 of the last sink beat
        carry_be = Signal(12, reset_less=True)
        carry_last = Signal(reset_less=True)     # that beat was the packet's last
        self.submodules.fsm = fsm = FSM(reset_state="HEADER")
        fsm.act("HEADER",
            sink.ready.eq(0),
            If(sink.valid & ~sink.first, sink.ready.eq(1)),  # not a packet start: drop (as LitePCIe does)
            If(sink.valid & sink.first,
                source.valid.eq(1),
                source.first.eq(1),
                source.last.eq(sink.last & (sink.be[4:] == 0)),
                source.dat.eq(Cat(sink.header[:96], sink.dat[:32])),
                source.be.eq(Cat(Constant(0xfff, 12), sink.be[:4])),
                If(source.ready,
                    sink.ready.eq(1),
                    NextValue(carry, sink.dat[32:]),
                    NextValue(carry_be, sink.be[4:]),
                    NextValue(carry_last, sink.last),
                    If(~source.last, NextState("DATA")),
                ),
            ),
        )
        fsm.act("DATA",
            If(carry_last,
                # Only the carried dwords are left.
                source.valid.eq(1),
                source.last.eq(1),
                source.dat.eq(Cat(carry, Constant(0, 32))),
                source.be.eq(Cat(carry_be, Constant(0, 4))),
                If(source.ready, NextState("HEADER")),
            ).Else(
                source.valid.eq(sink.valid),
                source.last.eq(sink.last & (sink.be[4:] == 0)),
                source.dat.eq(Cat(carry, sink.dat[:32])),
                source.be.eq(Cat(carry_be, sink.be[:4])),
                sink.ready.eq(source.ready),
                If(sink.valid & source.ready,
                    NextValue(carry, sink.dat[32:]),
                    NextValue(carry_be, sink.be[4:]),
                    NextValue(carry_last, sink.last),
                    If(source.last, NextState("HEADER")),
                ),
            ),
        )


# LitePCIe's packetizer looks the inserter class up when it is built: substitute ours.
lpp.LitePCIeTLPHeaderInserter128b3DWs = HeaderInserter128b3DWs


class HeaderExtracter128b(Module):
    """{H0, H1, H2, D0}, {D1..D4}, ... on a 128-bit stream back to a header and whole payload
    beats, one sink beat per cycle. LitePCIe's extracter spends a cycle in IDLE before each
    header, and its completion controller stalls one more cycle on each packet's first beat;
    at 64-byte completions (five beats) that is seven cycles per five beats. Here the header beat
    is taken at once, and a small FIFO behind lets the controller's stall overlap the next
    packet's header beat, so a stream of completions passes at the link's beat rate.

    The payload length comes from the header (the 128-bit hard block marks packet ends, not valid
    dwords): a 3-dword-header packet whose length is 1 mod 4 leaves its last dword in the carry,
    sent as one more beat. Only 3-dword headers carry payload past the depacketizer (32-bit BAR
    requests, completions); LitePCIe discards 4-dword ones, which only need to end."""

    def __init__(self, fifo_depth=4):
        self.sink = sink = stream.Endpoint(phy_layout(128))
        self.source = source = stream.Endpoint(tlp_raw_layout(128))
        self.submodules.fifo = fifo = stream.SyncFIFO(tlp_raw_layout(128), fifo_depth)
        self.comb += fifo.source.connect(source)
        out = fifo.sink

        header = Signal(128, reset_less=True)
        carry = Signal(32, reset_less=True)
        carry_be = Signal(4, reset_less=True)
        first = Signal()
        tail = Signal()     # after the last sink beat, one more beat holds the carried dword
        has_data = sink.dat[30]
        length = sink.dat[0:10]
        self.comb += out.header.eq(header)
        self.submodules.fsm = fsm = FSM(reset_state="HEADER")
        fsm.act("HEADER",
            sink.ready.eq(1),
            If(sink.valid,
                NextValue(header, sink.dat),
                NextValue(carry, sink.dat[96:]),
                NextValue(carry_be, sink.be[12:]),
                NextValue(first, 1),
                NextValue(tail, ~has_data | (length[0:2] == 1)),
                If(sink.last, NextState("TAIL")).Else(NextState("COPY")),
            ),
        )
        fsm.act("COPY",
            out.valid.eq(sink.valid),
            out.first.eq(first),
            out.last.eq(sink.last & ~tail),
            out.dat.eq(Cat(carry, sink.dat[:96])),
            out.be.eq(Cat(carry_be, sink.be[:12])),
            sink.ready.eq(out.ready),
            If(sink.valid & out.ready,
                NextValue(first, 0),
                NextValue(carry, sink.dat[96:]),
                NextValue(carry_be, sink.be[12:]),
                If(sink.last, If(tail, NextState("TAIL")).Else(NextState("HEADER"))),
            ),
        )
        fsm.act("TAIL",
            out.valid.eq(1),
            out.first.eq(first),
            out.last.eq(1),
            out.dat.eq(Cat(carry, Constant(0, 96))),
            out.be.eq(Cat(carry_be, Constant(0, 12))),
            If(out.ready, NextState("HEADER")),
        )


# The depacketizer looks the extracter class up when it is built: substitute ours.
lpd.LitePCIeTLPHeaderExtracter128b = HeaderExtracter128b


class HardBlockPhy(Module):
    """The 7-series PCIe hard block's user interface (pcie_7x: AXI-Stream TX/RX), as LitePCIe's
    endpoint expects a PHY. The block itself is instantiated by the board top, not here."""
    endianness = "big"
    qword_aligned = False

    def __init__(self, data_width, bar0_size):
        self.data_width = data_width
        self.bar0_size = bar0_size
        self.bar0_mask = get_bar_mask(bar0_size)
        self.sink = stream.Endpoint(phy_layout(data_width))
        self.source = stream.Endpoint(phy_layout(data_width))
        self.msi = stream.Endpoint(msi_layout())  # MSI is the shell's (rtl/shell), not LitePCIe's

        keep = data_width // 8
        self.s_axis_tx_tvalid = Signal(name="s_axis_tx_tvalid")
        self.s_axis_tx_tready = Signal(name="s_axis_tx_tready")
        self.s_axis_tx_tdata = Signal(data_width, name="s_axis_tx_tdata")
        self.s_axis_tx_tkeep = Signal(keep, name="s_axis_tx_tkeep")
        self.s_axis_tx_tlast = Signal(name="s_axis_tx_tlast")
        self.m_axis_rx_tvalid = Signal(name="m_axis_rx_tvalid")
        self.m_axis_rx_tready = Signal(name="m_axis_rx_tready")
        self.m_axis_rx_tdata = Signal(data_width, name="m_axis_rx_tdata")
        self.m_axis_rx_tkeep = Signal(keep, name="m_axis_rx_tkeep")
        self.m_axis_rx_tlast = Signal(name="m_axis_rx_tlast")
        self.m_axis_rx_tuser = Signal(22, name="m_axis_rx_tuser")

        # Same clock domain and width on both sides: the datapaths add no crossing, only the
        # 128-bit aligner on RX (a TLP may start in the upper half of a beat).
        self.submodules.tx_datapath = PHYTXDatapath(core_data_width=data_width, pcie_data_width=data_width,
                                                    clock_domain="pcie")
        self.submodules.rx_datapath = PHYRXDatapath(core_data_width=data_width, pcie_data_width=data_width,
                                                    clock_domain="pcie", with_aligner=True)
        tx = self.tx_datapath.source
        rx = self.rx_datapath.sink
        self.comb += [
            self.sink.connect(self.tx_datapath.sink),
            self.s_axis_tx_tvalid.eq(tx.valid),
            tx.ready.eq(self.s_axis_tx_tready),
            self.s_axis_tx_tdata.eq(tx.dat),
            self.s_axis_tx_tkeep.eq(tx.be),
            self.s_axis_tx_tlast.eq(tx.last),
            rx.valid.eq(self.m_axis_rx_tvalid),
            self.m_axis_rx_tready.eq(rx.ready),
            rx.dat.eq(self.m_axis_rx_tdata),
            rx.be.eq(self.m_axis_rx_tkeep),
            self.rx_datapath.source.connect(self.source),
        ]
        if data_width == 128:
            is_sof = self.m_axis_rx_tuser[10:15]
            is_eof = self.m_axis_rx_tuser[17:22]
            self.comb += [
                rx.first.eq(is_sof[4]),
                rx.last.eq(is_eof[4]),
                If(is_sof == 0b11000, self.rx_datapath.aligner.first_dword.eq(2)),
            ]
        else:
            self.comb += [rx.first.eq(0), rx.last.eq(self.m_axis_rx_tlast)]


def port_signals(ep, prefix, fields):
    """Module ports for a stream endpoint: <prefix>_valid/_ready/_first/_last and the fields."""
    ios = {}
    for name in ["valid", "ready", "first", "last"] + fields:
        sig = getattr(ep, name)
        ios[f"{prefix}_{name}"] = sig
    return ios


class TlpCore(Module):
    def __init__(self, data_width, tags, address_width, bar0_size):
        self.clock_domains.cd_sys = ClockDomain("sys")
        self.clock_domains.cd_pcie = ClockDomain("pcie")
        self.comb += [ClockSignal("pcie").eq(ClockSignal("sys")), ResetSignal("pcie").eq(ResetSignal("sys"))]

        self.submodules.phy = phy = HardBlockPhy(data_width, bar0_size)
        self.submodules.endpoint = ep = LitePCIeEndpoint(phy, max_pending_requests=tags, address_width=address_width,
                                                        endianness=phy.endianness)
        bar = ep.crossbar.get_slave_port(lambda a: 1)
        dma = ep.crossbar.get_master_port()  # read/write: through the tag controller, in order

        # ---- byte enables (see the module docstring). Added to LitePCIe's own modules so they come
        # after LitePCIe's constant assignments in the same process (the later one wins);
        # check_overrides() verifies that in the generated Verilog.
        dep, pkt = ep.depacketizer, ep.packetizer
        dep.comb += [
            dep.req_source.first_be.eq(dep.tlp_req.first_be),
            dep.req_source.last_be.eq(dep.tlp_req.last_be),
            dep.cmp_source.byte_count.eq(dep.tlp_cmp.byte_count),
            dep.cmp_source.end.eq((dep.tlp_cmp.length == dep.tlp_cmp.byte_count[2:]) | (dep.tlp_cmp.status != 0)),
        ]
        pkt.comb += [
            pkt.tlp_req.first_be.eq(pkt.req_sink.first_be),
            pkt.tlp_req.last_be.eq(pkt.req_sink.last_be),
            If(pkt.req_sink.we, pkt.tlp_req.be.eq(pkt.req_sink.dat_be)),
            pkt.tlp_cmp.byte_count.eq(pkt.cmp_sink.byte_count),
            pkt.tlp_cmp.be.eq(pkt.cmp_sink.dat_be),
        ]

        # ---- module ports
        self.ios = {self.cd_sys.clk, self.cd_sys.rst}
        self.cd_sys.clk.name_override = "clk"
        self.cd_sys.rst.name_override = "rst"
        for s in [phy.s_axis_tx_tvalid, phy.s_axis_tx_tready, phy.s_axis_tx_tdata, phy.s_axis_tx_tkeep,
                  phy.s_axis_tx_tlast, phy.m_axis_rx_tvalid, phy.m_axis_rx_tready, phy.m_axis_rx_tdata,
                  phy.m_axis_rx_tkeep, phy.m_axis_rx_tlast, phy.m_axis_rx_tuser]:
            self.ios.add(s)
        named = {}
        # BAR requests from the host (sink of the user's slave port) and their completions.
        named.update(port_signals(bar.sink, "bar_req", ["we", "adr", "len", "req_id", "tag", "dat",
                                                        "first_be", "last_be"]))
        named.update(port_signals(bar.source, "bar_cpl", ["req_id", "cmp_id", "adr", "len", "end", "err", "tag",
                                                          "dat", "byte_count", "dat_be"]))
        # Device requests to host memory and their completions (in request order).
        named.update(port_signals(dma.source, "dma_req", ["we", "adr", "len", "req_id", "dat", "first_be",
                                                          "last_be", "dat_be", "user_id"]))
        named.update(port_signals(dma.sink, "dma_cpl", ["adr", "len", "end", "err", "dat", "user_id"]))
        for n, s in named.items():
            s.name_override = n
            self.ios.add(s)
        self.rd_credit = Signal(name="dma_rd_credit")
        self.rd_credit.name_override = "dma_rd_credit"
        self.ios.add(self.rd_credit)

    def do_finalize(self):
        # The crossbar creates its tag controller when it is finalized (after our submodules).
        # A read request is accepted at once when the controller has a free tag and queue slot.
        ctrl = self.endpoint.crossbar.controller
        self.comb += self.rd_credit.eq(ctrl.tag_queue.source.valid & ctrl.req_queue.sink.ready)


def check(core):
    """Fails loudly if the pinned LitePCIe no longer matches what this script relies on."""
    ep = core.endpoint
    for ep_, fields in ((ep.crossbar.master.sink, ("first_be", "last_be", "dat_be")),
                        (ep.crossbar.slave.source, ("first_be", "last_be")),
                        (ep.crossbar.master.source, ("byte_count", "dat_be"))):
        for f in fields:
            if not hasattr(ep_, f):
                sys.exit(f"gen_tlp_core: LitePCIe's streams lack '{f}': the layout patch did not apply")
    inserters = [m for _, m in ep.packetizer._submodules if isinstance(m, lpp.LitePCIeTLPHeaderInserter3DWs4DWs)]
    if core.phy.data_width == 128:
        ours = [m for i in inserters for _, m in i._submodules if isinstance(m, HeaderInserter128b3DWs)]
        if len(ours) != 1:
            sys.exit("gen_tlp_core: the 128-bit 3-dword header inserter was not replaced: LitePCIe changed?")
        if not isinstance(ep.depacketizer.header_extracter, HeaderExtracter128b):
            sys.exit("gen_tlp_core: the 128-bit header extracter was not replaced: LitePCIe changed?")
    for obj, attr in ((ep.depacketizer, "tlp_req"), (ep.depacketizer, "tlp_cmp"), (ep.packetizer, "tlp_req"),
                      (ep.packetizer, "tlp_cmp"), (ep.crossbar, "controller")):
        if not hasattr(obj, attr):
            sys.exit(f"gen_tlp_core: LitePCIe has no {type(obj).__name__}.{attr}: unsupported version")


# Signals whose last assignment in the generated Verilog must come from the added fields.
OVERRIDES = {
    "packetizer_tlp_req_payload_first_be": "packetizer_req_sink_payload_first_be",
    "packetizer_tlp_req_payload_last_be": "packetizer_req_sink_payload_last_be",
    "packetizer_tlp_req_payload_be": "packetizer_req_sink_payload_dat_be",
    "packetizer_tlp_cmp_payload_byte_count": "packetizer_cmp_sink_payload_byte_count",
    "packetizer_tlp_cmp_payload_be": "packetizer_cmp_sink_payload_dat_be",
    "depacketizer_cmp_source_payload_end": "depacketizer_tlp_cmp_payload_status",
}


def check_overrides(text):
    """In each combinational process the last assignment wins: make sure it is ours."""
    import re
    for target, source in OVERRIDES.items():
        assigns = re.findall(rf"^\s*(?:assign\s+)?{target}\s*(?:<=|=)\s*(.*);$", text, re.M)
        if not assigns or source not in assigns[-1]:
            sys.exit(f"gen_tlp_core: the generated core does not take {target} from {source} "
                     f"(last assignment: {assigns[-1] if assigns else 'none'}); LitePCIe changed?")


def main():
    ap = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    ap.add_argument("--out", required=True, help="Verilog file to write")
    ap.add_argument("--name", default="sgpu_litepcie_s7", help="module name")
    ap.add_argument("--data-width", type=int, default=128, choices=[64, 128])
    ap.add_argument("--tags", type=int, default=8, help="read requests in flight (power of two)")
    ap.add_argument("--address-width", type=int, default=64, choices=[32, 64])
    ap.add_argument("--bar0-size", type=int, default=4096)
    a = ap.parse_args()
    if a.tags < 2 or a.tags & (a.tags - 1):
        sys.exit("gen_tlp_core: --tags must be a power of two >= 2")

    core = TlpCore(a.data_width, a.tags, a.address_width, a.bar0_size)
    core.finalize()
    check(core)
    out = convert(core, ios=core.ios, name=a.name)
    text = str(out)
    check_overrides(text)
    header = (f"// Generated by fpga/litepcie/gen_tlp_core.py from LitePCIe (see tools/requirements.txt): "
              f"data width {a.data_width}, {a.tags} tags, {a.address_width}-bit addresses, BAR0 {a.bar0_size} bytes.\n"
              "// Do not edit.\n")
    if os.path.exists(a.out) and open(a.out).read() == header + text:
        return  # unchanged: a reconfigure does not re-verilate the board model
    os.makedirs(os.path.dirname(os.path.abspath(a.out)), exist_ok=True)
    tmp = a.out + ".tmp"
    with open(tmp, "w") as f:
        f.write(header + text)
    os.replace(tmp, a.out)


if __name__ == "__main__":
    main()
