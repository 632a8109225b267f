# softgpu board build in Vivado batch mode (non-project flow), everything from text in the repo:
#   vivado -mode batch -source fpga/vivado/build.tcl -tclargs <config.tcl> <out-dir> <build-id>
# Run by `make -C fpga BOARD=<board> bitstream`, which writes config.tcl from fpga/boards.toml
# (part, top, sources, constraints, the IP Tcl, PCI IDs, flash settings) and generates the
# 7-series bridge core first. Steps: vendor IP from its Tcl (and a check that our black box of it
# still matches), synthesis, implementation, timing and utilisation reports, bitstream, flash
# image. Stops on an error, on unmet timing (set ::env(SGPU_ALLOW_TIMING_FAIL) to go on), and on
# a critical warning about constraints.
set config [lindex $argv 0]
set out [file normalize [lindex $argv 1]]
set build_id [lindex $argv 2]
source $config
file mkdir $out/ip $out/reports
puts "softgpu: building $board ($part), top $top, build id $build_id"

set_part $part
set_property target_language Verilog [current_project]

# ---------------------------------------------------------------- vendor IP, from Tcl
foreach t $ip_tcl {
  source $t
}
foreach m $ip_modules {
  set ip [get_ips $m]
  generate_target {synthesis instantiation_template} $ip
  synth_ip $ip
  # The port list our checks use (fpga/stubs) must be the one this Vivado made.
  set made [glob -nocomplain -directory $out/ip/$m ${m}_stub.v]
  set ours [lsearch -inline -glob $stubs */$m.sv]
  if {$made eq "" || $ours eq ""} { error "softgpu: no synthesis stub for IP $m" }
  if {[catch {exec python3 $repo/fpga/scripts/check_stub.py --ip $made --ours $ours} msg]} {
    error "softgpu: $msg"
  }
  puts $msg
}

# ---------------------------------------------------------------- design
read_verilog -sv $sources
read_xdc $xdc_files
synth_design -top $top -part $part -include_dirs $include_dirs -generic BuildId=32'h$build_id \
  -flatten_hierarchy rebuilt
report_utilization -file $out/reports/synth_utilization.txt
opt_design
# 7-series: the hard block's IP places its GT common and buffer RAMs by LOC; let the placer
# choose (as LitePCIe does), the lane LOCs stay.
if {$family eq "s7"} {
  set gtcommon [get_cells -quiet -hierarchical -filter {NAME =~ *gtp_common.gtpe2_common_i}]
  if {[llength $gtcommon]} { reset_property LOC $gtcommon }
  set brams [get_cells -quiet -hierarchical -filter {NAME =~ *genblk*.bram36_tdp_bl.bram36_tdp_bl}]
  if {[llength $brams]} { reset_property LOC $brams }
}
place_design
phys_opt_design
route_design
report_timing_summary -max_paths 20 -file $out/reports/timing.txt
report_utilization -hierarchical -file $out/reports/utilization.txt
report_clock_interaction -file $out/reports/clock_interaction.txt
report_cdc -file $out/reports/cdc.txt
set wns [get_property SLACK [get_timing_paths -max_paths 1 -nworst 1 -setup]]
set whs [get_property SLACK [get_timing_paths -max_paths 1 -nworst 1 -hold]]
puts "softgpu: worst setup slack $wns ns, worst hold slack $whs ns"
if {($wns < 0 || $whs < 0) && ![info exists ::env(SGPU_ALLOW_TIMING_FAIL)]} {
  error "softgpu: timing not met (see $out/reports/timing.txt); SGPU_ALLOW_TIMING_FAIL=1 writes the bitstream anyway"
}

# ---------------------------------------------------------------- bitstream and flash image
write_bitstream -force $out/$board.bit
if {$family eq "s7"} {
  # SPI x4 image from address 0 (the board boots it at power-up).
  write_cfgmem -force -format bin -interface $flash_interface -size $flash_size_mb \
    -loadbit "up 0x0 $out/$board.bit" -file $out/$board.bin
} else {
  # Alveo: the user image above the golden one (the card boots golden, then this).
  write_cfgmem -force -format mcs -interface $flash_interface -size $flash_size_mb \
    -loadbit "up $flash_user_offset $out/$board.bit" -file $out/$board.mcs
}
puts "softgpu: done: $out/$board.bit"
