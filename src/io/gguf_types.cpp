// Names of GGUF's tensor and metadata value types, for error messages.
#include "io/gguf_format.h"

namespace nuvec::io::detail {

const char* gguf_tensor_type_name(uint32_t type) {
  // GGML's numbering; the gaps are types GGML has removed.
  static const char* const names[] = {
      "F32",        "F16",        "Q4_0",       "Q4_1",     "Q4_2",    "Q4_3",
      "Q5_0",       "Q5_1",       "Q8_0",       "Q8_1",     "Q2_K",    "Q3_K",
      "Q4_K",       "Q5_K",       "Q6_K",       "Q8_K",     "IQ2_XXS", "IQ2_XS",
      "IQ3_XXS",    "IQ1_S",      "IQ4_NL",     "IQ3_S",    "IQ2_S",   "IQ4_XS",
      "I8",         "I16",        "I32",        "I64",      "F64",     "IQ1_M",
      "BF16",       "Q4_0_4_4",   "Q4_0_4_8",   "Q4_0_8_8", "TQ1_0",   "TQ2_0",
      "IQ4_NL_4_4", "IQ4_NL_4_8", "IQ4_NL_8_8", "MXFP4",    "NVFP4",   "Q1_0",
  };
  return type < sizeof(names) / sizeof(names[0]) ? names[type] : "?";
}

const char* gguf_value_type_name(uint32_t type) {
  static const char* const names[] = {
      "uint8", "int8",   "uint16", "int16",  "uint32", "int32",   "float32",
      "bool",  "string", "array",  "uint64", "int64",  "float64",
  };
  return type < gguf_value_types ? names[type] : "?";
}

}  // namespace nuvec::io::detail
