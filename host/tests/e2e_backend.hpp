// The backend the end-to-end tests run on: "sim" unless SGPU_E2E_BACKEND names another. CTest runs
// them a second time with "pcie-sim": the pcie transport (register access, DMA pool, MSI wait)
// over the simulated PCI function, i.e. the code that drives a card, against the same RTL.
#pragma once

#include <cstdlib>
#include <string>

inline std::string e2e_backend() {
  const char* b = std::getenv("SGPU_E2E_BACKEND");
  return b && *b ? b : "sim";
}
