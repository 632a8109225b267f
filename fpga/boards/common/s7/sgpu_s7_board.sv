// Board top for the 7-series PCIe cards (Acorn CLE-215+, LiteFury, NiteFury): PCIe pins, the
// hard block (pcie_s7, created from fpga/boards/common/s7/pcie_s7.tcl), its PIPE clocking, the
// core's clock, the shell, LEDs. Pins and lane placement are in each board's XDC; this file is
// the same for every card with an x4 link.
//
// Clock plan (docs/boards.md): the slot's 100 MHz reference clock feeds the GTPs (through
// IBUFDS_GTE2) and, through a BUFG, the core's MMCM (1000 MHz VCO / 8 = 125 MHz core clock).
// The hard block's user clock (USERCLK2, 125 MHz from the PIPE clock MMCM) runs the transaction
// layer; the two 125 MHz clocks come from different MMCMs and are unrelated: the shell crosses
// between them.
`default_nettype none

module sgpu_s7_board #(
  parameter int unsigned Lanes = 4,
  parameter logic [31:0] BuildId = 32'h0,
  /// Core clock = 1000 MHz / CoreClockDivide.
  parameter int unsigned CoreClockDivide = 8
) (
  input  wire logic             pcie_refclk_p,
  input  wire logic             pcie_refclk_n,
  input  wire logic             pcie_perst_n,
  input  wire logic [Lanes-1:0] pcie_rx_p,
  input  wire logic [Lanes-1:0] pcie_rx_n,
  output      logic [Lanes-1:0] pcie_tx_p,
  output      logic [Lanes-1:0] pcie_tx_n,
  /// 0: PCIe link up, 1: interrupt line, 2: core clock alive, 3: user clock alive.
  output      logic [3:0]       led_o
);

  // ------------------------------------------------------------------ reference clock
  logic refclk, refclk_fabric;
  IBUFDS_GTE2 u_refclk (.I(pcie_refclk_p), .IB(pcie_refclk_n), .CEB(1'b0), .O(refclk), .ODIV2());
  BUFG u_refclk_bufg (.I(refclk), .O(refclk_fabric));

  // ------------------------------------------------------------------ core clock
  logic core_fb, core_clk_mmcm, core_clk, core_locked;
  MMCME2_BASE #(
    .CLKIN1_PERIOD   (10),
    .CLKFBOUT_MULT_F (10),
    .DIVCLK_DIVIDE   (1),
    .CLKOUT0_DIVIDE_F(CoreClockDivide)
  ) u_core_mmcm (
    .CLKIN1  (refclk_fabric),
    .CLKFBIN (core_fb),
    .CLKFBOUT(core_fb),
    .CLKOUT0 (core_clk_mmcm),
    .CLKFBOUTB(), .CLKOUT0B(), .CLKOUT1(), .CLKOUT1B(), .CLKOUT2(), .CLKOUT2B(), .CLKOUT3(), .CLKOUT3B(),
    .CLKOUT4(), .CLKOUT5(), .CLKOUT6(),
    .LOCKED  (core_locked),
    .PWRDWN  (1'b0),
    .RST     (1'b0)
  );
  BUFG u_core_bufg (.I(core_clk_mmcm), .O(core_clk));

  // ------------------------------------------------------------------ PCIe hard block
  logic             txoutclk, pclk, dclk, userclk1, userclk2, pipe_locked;
  logic [Lanes-1:0] pclk_sel;

  sgpu_s7_pipe_clock #(.Lanes(Lanes)) u_pipe_clock (
    .txoutclk_i(txoutclk),
    .pclk_sel_i(pclk_sel),
    .pclk_o    (pclk),
    .dclk_o    (dclk),
    .userclk1_o(userclk1),
    .userclk2_o(userclk2),
    .locked_o  (pipe_locked)
  );

  logic         user_clk, user_reset, user_lnk_up;
  logic         s_axis_tx_tvalid, s_axis_tx_tready, s_axis_tx_tlast;
  logic [127:0] s_axis_tx_tdata;
  logic [15:0]  s_axis_tx_tkeep;
  logic [3:0]   s_axis_tx_tuser;
  logic         m_axis_rx_tvalid, m_axis_rx_tready, m_axis_rx_tlast;
  logic [127:0] m_axis_rx_tdata;
  logic [15:0]  m_axis_rx_tkeep;
  logic [21:0]  m_axis_rx_tuser;
  logic         cfg_interrupt, cfg_interrupt_rdy, cfg_interrupt_assert, cfg_interrupt_msienable;
  logic [7:0]   cfg_interrupt_di, cfg_bus_number;
  logic [15:0]  cfg_command, cfg_dcommand;
  logic [4:0]   cfg_device_number;
  logic [2:0]   cfg_function_number;

  pcie_s7 u_pcie (
    // PCI Express and reference clock
    .pci_exp_txp(pcie_tx_p), .pci_exp_txn(pcie_tx_n), .pci_exp_rxp(pcie_rx_p), .pci_exp_rxn(pcie_rx_n),
    .sys_clk(refclk), .sys_rst_n(pcie_perst_n),
    // PIPE clocking
    .pipe_pclk_in(pclk), .pipe_rxusrclk_in(pclk), .pipe_rxoutclk_in('0), .pipe_dclk_in(dclk),
    .pipe_userclk1_in(userclk1), .pipe_userclk2_in(userclk2), .pipe_oobclk_in(pclk),
    .pipe_mmcm_lock_in(pipe_locked), .pipe_txoutclk_out(txoutclk), .pipe_rxoutclk_out(),
    .pipe_pclk_sel_out(pclk_sel), .pipe_gen3_out(), .pipe_mmcm_rst_n(1'b1),
    // User interface
    .user_clk_out(user_clk), .user_reset_out(user_reset), .user_lnk_up(user_lnk_up), .user_app_rdy(),
    .tx_buf_av(), .tx_cfg_req(), .tx_err_drop(), .tx_cfg_gnt(1'b1),
    .s_axis_tx_tready, .s_axis_tx_tdata, .s_axis_tx_tkeep, .s_axis_tx_tlast, .s_axis_tx_tvalid, .s_axis_tx_tuser,
    .m_axis_rx_tdata, .m_axis_rx_tkeep, .m_axis_rx_tlast, .m_axis_rx_tvalid, .m_axis_rx_tready, .m_axis_rx_tuser,
    .rx_np_ok(1'b1), .rx_np_req(1'b1),
    .fc_cpld(), .fc_cplh(), .fc_npd(), .fc_nph(), .fc_pd(), .fc_ph(), .fc_sel(3'b000),
    // Configuration management (unused)
    .cfg_mgmt_do(), .cfg_mgmt_rd_wr_done(), .cfg_mgmt_di('0), .cfg_mgmt_byte_en('0), .cfg_mgmt_dwaddr('0),
    .cfg_mgmt_wr_en(1'b0), .cfg_mgmt_rd_en(1'b0), .cfg_mgmt_wr_readonly(1'b0), .cfg_mgmt_wr_rw1c_as_rw(1'b0),
    // Configuration status
    .cfg_status(), .cfg_command, .cfg_dstatus(), .cfg_dcommand, .cfg_lstatus(), .cfg_lcommand(),
    .cfg_dcommand2(), .cfg_pcie_link_state(), .cfg_pmcsr_pme_en(), .cfg_pmcsr_powerstate(),
    .cfg_pmcsr_pme_status(), .cfg_received_func_lvl_rst(),
    .cfg_bus_number, .cfg_device_number, .cfg_function_number,
    // Error reporting (none)
    .cfg_err_ecrc(1'b0), .cfg_err_ur(1'b0), .cfg_err_cpl_timeout(1'b0), .cfg_err_cpl_unexpect(1'b0),
    .cfg_err_cpl_abort(1'b0), .cfg_err_posted(1'b0), .cfg_err_cor(1'b0), .cfg_err_atomic_egress_blocked(1'b0),
    .cfg_err_internal_cor(1'b0), .cfg_err_malformed(1'b0), .cfg_err_mc_blocked(1'b0), .cfg_err_poisoned(1'b0),
    .cfg_err_norecovery(1'b0), .cfg_err_tlp_cpl_header('0), .cfg_err_cpl_rdy(), .cfg_err_locked(1'b0),
    .cfg_err_acs(1'b0), .cfg_err_internal_uncor(1'b0), .cfg_err_aer_headerlog('0),
    .cfg_aer_interrupt_msgnum('0), .cfg_err_aer_headerlog_set(), .cfg_aer_ecrc_check_en(), .cfg_aer_ecrc_gen_en(),
    // Power management
    .cfg_trn_pending(1'b0), .cfg_pm_halt_aspm_l0s(1'b0), .cfg_pm_halt_aspm_l1(1'b0), .cfg_pm_force_state_en(1'b0),
    .cfg_pm_force_state('0), .cfg_dsn('0), .cfg_turnoff_ok(1'b0), .cfg_to_turnoff(), .cfg_pm_wake(1'b0),
    .cfg_pm_send_pme_to(1'b0), .cfg_ds_bus_number('0), .cfg_ds_device_number('0), .cfg_ds_function_number('0),
    // Interrupts: MSI
    .cfg_interrupt, .cfg_interrupt_rdy, .cfg_interrupt_assert, .cfg_interrupt_di, .cfg_interrupt_do(),
    .cfg_interrupt_mmenable(), .cfg_interrupt_msienable, .cfg_interrupt_msixenable(), .cfg_interrupt_msixfm(),
    .cfg_interrupt_stat(1'b0), .cfg_pciecap_interrupt_msgnum('0),
    // Messages (root-port use; ignored)
    .cfg_msg_received(), .cfg_msg_data(), .cfg_bridge_serr_en(), .cfg_slot_control_electromech_il_ctl_pulse(),
    .cfg_root_control_syserr_corr_err_en(), .cfg_root_control_syserr_non_fatal_err_en(),
    .cfg_root_control_syserr_fatal_err_en(), .cfg_root_control_pme_int_en(),
    .cfg_aer_rooterr_corr_err_reporting_en(), .cfg_aer_rooterr_non_fatal_err_reporting_en(),
    .cfg_aer_rooterr_fatal_err_reporting_en(), .cfg_aer_rooterr_corr_err_received(),
    .cfg_aer_rooterr_non_fatal_err_received(), .cfg_aer_rooterr_fatal_err_received(),
    .cfg_msg_received_err_cor(), .cfg_msg_received_err_non_fatal(), .cfg_msg_received_err_fatal(),
    .cfg_msg_received_pm_as_nak(), .cfg_msg_received_pm_pme(), .cfg_msg_received_pme_to_ack(),
    .cfg_msg_received_assert_int_a(), .cfg_msg_received_assert_int_b(), .cfg_msg_received_assert_int_c(),
    .cfg_msg_received_assert_int_d(), .cfg_msg_received_deassert_int_a(), .cfg_msg_received_deassert_int_b(),
    .cfg_msg_received_deassert_int_c(), .cfg_msg_received_deassert_int_d(), .cfg_msg_received_setslotpowerlimit(),
    .cfg_vc_tcvc_map(),
    // Physical layer
    .pl_directed_link_change('0), .pl_directed_link_width('0), .pl_directed_link_speed(1'b0),
    .pl_directed_link_auton(1'b0), .pl_upstream_prefer_deemph(1'b1), .pl_sel_lnk_rate(), .pl_sel_lnk_width(),
    .pl_ltssm_state(), .pl_lane_reversal_mode(), .pl_phy_lnk_up(), .pl_tx_pm_state(), .pl_rx_pm_state(),
    .pl_link_upcfg_cap(), .pl_link_gen2_cap(), .pl_link_partner_gen2_supported(), .pl_initial_link_width(),
    .pl_directed_change_done(), .pl_received_hot_rst(), .pl_transmit_hot_rst(1'b0),
    .pl_downstream_deemph_source(1'b0),
    // DRP (unused)
    .pcie_drp_clk(1'b1), .pcie_drp_en(1'b0), .pcie_drp_we(1'b0), .pcie_drp_addr('0), .pcie_drp_di('0),
    .pcie_drp_do(), .pcie_drp_rdy()
  );

  // ------------------------------------------------------------------ the shell and the core
  logic link_up, irq, reg_write;

  sgpu_s7_shell #(.BuildId(BuildId)) u_shell (
    .user_clk_i(user_clk), .user_reset_i(user_reset), .user_lnk_up_i(user_lnk_up),
    .s_axis_tx_tvalid, .s_axis_tx_tready, .s_axis_tx_tdata, .s_axis_tx_tkeep, .s_axis_tx_tlast, .s_axis_tx_tuser,
    .m_axis_rx_tvalid, .m_axis_rx_tready, .m_axis_rx_tdata, .m_axis_rx_tkeep, .m_axis_rx_tlast, .m_axis_rx_tuser,
    .cfg_interrupt, .cfg_interrupt_rdy, .cfg_interrupt_assert, .cfg_interrupt_di, .cfg_interrupt_msienable,
    .cfg_command, .cfg_dcommand, .cfg_bus_number, .cfg_device_number, .cfg_function_number,
    .core_clk_i(core_clk),
    .core_rst_ni(core_locked),
    .link_up_o(link_up),
    .reg_write_o(reg_write),
    .irq_o(irq)
  );

  // ------------------------------------------------------------------ LEDs
  logic [25:0] core_beat_q, user_beat_q;
  always_ff @(posedge core_clk) core_beat_q <= core_beat_q + 1'b1;
  always_ff @(posedge user_clk) user_beat_q <= user_beat_q + (reg_write ? 26'd1 << 22 : 26'd1);
  assign led_o = {user_beat_q[25], core_beat_q[25], irq, link_up};

endmodule

`default_nettype wire
