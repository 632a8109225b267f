# Volatile load of an Alveo card through Vivado's hardware manager (its JTAG: docs/boards.md):
#   vivado -mode batch -source fpga/vivado/program.tcl -tclargs <config.tcl> <out-dir>
set config [lindex $argv 0]
set out [lindex $argv 1]
source $config
open_hw_manager
connect_hw_server
open_hw_target
set dev [lindex [get_hw_devices -filter "PART =~ [lindex [split $part -] 0]*"] 0]
if {$dev eq ""} { error "softgpu: no $part on the JTAG chain" }
current_hw_device $dev
set_property PROGRAM.FILE $out/$board.bit $dev
program_hw_devices $dev
puts "softgpu: $board loaded"
