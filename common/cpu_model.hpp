// The CPU's name for the report's device column, as /proc/cpuinfo gives it ("CPU" where it does
// not): the CPU drivers of both chapters name the machine the same way.
#pragma once

#include <fstream>
#include <string>

namespace lab {

inline std::string cpu_model_name() {
  std::ifstream cpuinfo("/proc/cpuinfo");
  std::string line;
  while (std::getline(cpuinfo, line)) {
    if (line.rfind("model name", 0) == 0) {
      const auto colon = line.find(':');
      if (colon != std::string::npos) return line.substr(line.find_first_not_of(' ', colon + 1));
    }
  }
  return "CPU";
}

}  // namespace lab
