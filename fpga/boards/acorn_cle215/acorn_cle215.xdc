# SQRL Acorn CLE-215+ (xc7a200tfbg484-3), M.2 2280 M-key, PCIe Gen2 x4.
# Pins: LiteX's platform for the board (litex-boards sqrl_acorn.py) and RHS Research's
# LiteFury/NiteFury constraints (same board layout).

# ---- PCIe: reference clock (MGTREFCLK0 of the GTP quad), PERST#, lanes 0..3.
# Lane n of the link is GTPE2_CHANNEL_X0Y(7-n), the hard block's default placement at X0Y0.
set_property PACKAGE_PIN F6 [get_ports pcie_refclk_p]
set_property PACKAGE_PIN E6 [get_ports pcie_refclk_n]
# PERST# is a 3.3 V signal on this bank (LiteX's platform files say LVCMOS15 for the Acorn,
# RHS Research's say LVCMOS33; the LEDs and CLKREQ# in the same bank are 3.3 V).
set_property -dict {PACKAGE_PIN J1 IOSTANDARD LVCMOS33 PULLUP true} [get_ports pcie_perst_n]
set_property PACKAGE_PIN B10 [get_ports {pcie_rx_p[0]}]
set_property PACKAGE_PIN A10 [get_ports {pcie_rx_n[0]}]
set_property PACKAGE_PIN B6  [get_ports {pcie_tx_p[0]}]
set_property PACKAGE_PIN A6  [get_ports {pcie_tx_n[0]}]
set_property PACKAGE_PIN B8  [get_ports {pcie_rx_p[1]}]
set_property PACKAGE_PIN A8  [get_ports {pcie_rx_n[1]}]
set_property PACKAGE_PIN B4  [get_ports {pcie_tx_p[1]}]
set_property PACKAGE_PIN A4  [get_ports {pcie_tx_n[1]}]
set_property PACKAGE_PIN D11 [get_ports {pcie_rx_p[2]}]
set_property PACKAGE_PIN C11 [get_ports {pcie_rx_n[2]}]
set_property PACKAGE_PIN D5  [get_ports {pcie_tx_p[2]}]
set_property PACKAGE_PIN C5  [get_ports {pcie_tx_n[2]}]
set_property PACKAGE_PIN D9  [get_ports {pcie_rx_p[3]}]
set_property PACKAGE_PIN C9  [get_ports {pcie_rx_n[3]}]
set_property PACKAGE_PIN D7  [get_ports {pcie_tx_p[3]}]
set_property PACKAGE_PIN C7  [get_ports {pcie_tx_n[3]}]

# ---- LEDs: 0 link up, 1 interrupt, 2 core clock alive, 3 user clock alive.
set_property -dict {PACKAGE_PIN G3 IOSTANDARD LVCMOS33 DRIVE 8} [get_ports {led_o[0]}]
set_property -dict {PACKAGE_PIN H3 IOSTANDARD LVCMOS33 DRIVE 8} [get_ports {led_o[1]}]
set_property -dict {PACKAGE_PIN G4 IOSTANDARD LVCMOS33 DRIVE 8} [get_ports {led_o[2]}]
set_property -dict {PACKAGE_PIN H4 IOSTANDARD LVCMOS33 DRIVE 8} [get_ports {led_o[3]}]

# ---- Configuration: 32 MiB SPI flash, x4 (configuration time against PCIe's 100 ms: docs/boards.md,
# "Program, flash, rescan").
set_property CFGBVS VCCO [current_design]
set_property CONFIG_VOLTAGE 3.3 [current_design]
set_property CONFIG_MODE SPIx4 [current_design]
set_property BITSTREAM.CONFIG.SPI_BUSWIDTH 4 [current_design]
set_property BITSTREAM.CONFIG.CONFIGRATE 16 [current_design]
set_property BITSTREAM.GENERAL.COMPRESS TRUE [current_design]
set_property BITSTREAM.CONFIG.OVERTEMPPOWERDOWN ENABLE [current_design]
