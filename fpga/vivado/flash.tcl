# Writes an Alveo card's configuration flash (user image above the golden one) through Vivado's
# hardware manager, then reboots the FPGA from it:
#   vivado -mode batch -source fpga/vivado/flash.tcl -tclargs <config.tcl> <out-dir>
set config [lindex $argv 0]
set out [lindex $argv 1]
source $config
open_hw_manager
connect_hw_server
open_hw_target
set dev [lindex [get_hw_devices -filter "PART =~ [lindex [split $part -] 0]*"] 0]
if {$dev eq ""} { error "softgpu: no $part on the JTAG chain" }
current_hw_device $dev
create_hw_cfgmem -hw_device $dev [lindex [get_cfgmem_parts $flash_part] 0]
set mem [get_property PROGRAM.HW_CFGMEM $dev]
set_property PROGRAM.FILES [list $out/$board.mcs] $mem
set_property PROGRAM.ADDRESS_RANGE {use_file} $mem
set_property PROGRAM.ERASE 1 $mem
set_property PROGRAM.CFG_PROGRAM 1 $mem
set_property PROGRAM.VERIFY 1 $mem
create_hw_bitstream -hw_device $dev [get_property PROGRAM.HW_CFGMEM_BITFILE $dev]
program_hw_devices $dev
program_hw_cfgmem -hw_cfgmem $mem
boot_hw_device $dev
puts "softgpu: flash written and the FPGA rebooted from it"
