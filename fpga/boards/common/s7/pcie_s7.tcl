# The 7-series PCIe hard block (pcie_7x, PG054) as the s7 shell uses it, created by
# fpga/vivado/build.tcl (variables from the board's config.tcl): module pcie_s7, Gen2 x4,
# 128-bit user interface at 125 MHz, PIPE clocking outside the IP (sgpu_s7_pipe_clock), one
# 32-bit non-prefetchable memory BAR of bar0_kib KiB, MSI with one vector and 32-bit addresses,
# no legacy interrupt, Max_Payload_Size up to 512 bytes. The settings follow what LitePCIe's
# S7PCIEPHY uses on these boards. fpga/stubs/pcie_s7.sv is the port list this produces.
create_ip -vendor xilinx.com -library ip -name pcie_7x -module_name pcie_s7 -dir $out/ip
set_property -dict [list \
  CONFIG.Component_Name           {pcie_s7} \
  CONFIG.PCIe_Blk_Locn            {X0Y0} \
  CONFIG.Maximum_Link_Width       {X4} \
  CONFIG.Link_Speed               {5.0_GT/s} \
  CONFIG.Trgt_Link_Speed          {4'h2} \
  CONFIG.Interface_Width          {128_bit} \
  CONFIG.User_Clk_Freq            {125} \
  CONFIG.Ref_Clk_Freq             {100_MHz} \
  CONFIG.Vendor_ID                $pci_vendor_id \
  CONFIG.Device_ID                $pci_device_id \
  CONFIG.Revision_ID              $pci_revision \
  CONFIG.Subsystem_Vendor_ID      $pci_subsystem_vendor_id \
  CONFIG.Subsystem_ID             $pci_subsystem_id \
  CONFIG.Class_Code_Base          [string range $pci_class_code 0 1] \
  CONFIG.Class_Code_Sub           [string range $pci_class_code 2 3] \
  CONFIG.Class_Code_Interface     [string range $pci_class_code 4 5] \
  CONFIG.Bar0_Enabled             {true} \
  CONFIG.Bar0_Type                {Memory} \
  CONFIG.Bar0_64bit               {false} \
  CONFIG.Bar0_Prefetchable        {false} \
  CONFIG.Bar0_Scale               {Kilobytes} \
  CONFIG.Bar0_Size                $bar0_kib \
  CONFIG.Max_Payload_Size         {512_bytes} \
  CONFIG.Buf_Opt_BMA              {true} \
  CONFIG.Trans_Buf_Pipeline       {None} \
  CONFIG.Legacy_Interrupt         {None} \
  CONFIG.IntX_Generation          {false} \
  CONFIG.MSI_64b                  {false} \
  CONFIG.Multiple_Message_Capable {1_vector} \
] [get_ips pcie_s7]
