// The CPU dispatch table, expanded from the registry.
#include "backend/backend.h"
#include "backend/cpu/cpu.h"

namespace nuvec::backend {

namespace {

using Fn = void (*)(const Primitive&, const std::vector<Array>&, std::vector<Array>&);

template <class P>
void thunk(const Primitive& p, const std::vector<Array>& in, std::vector<Array>& out) {
  cpu::eval(static_cast<const P&>(p), in, out);
}

constexpr Fn table[] = {
#define NUVEC_TABLE_ENTRY(Name, trait) &thunk<Name>,
    NUVEC_UNARY_PRIMITIVES(NUVEC_TABLE_ENTRY)
    NUVEC_BINARY_PRIMITIVES(NUVEC_TABLE_ENTRY)
    NUVEC_OTHER_PRIMITIVES(NUVEC_TABLE_ENTRY)
#undef NUVEC_TABLE_ENTRY
};
static_assert(sizeof(table) / sizeof(table[0]) == primitive_count);

}  // namespace

void eval_cpu(const Primitive& p, const std::vector<Array>& inputs,
              std::vector<Array>& outputs) {
  table[static_cast<int>(p.id())](p, inputs, outputs);
}

const void* host_pointer(const Array& a) {
  const auto& d = a.desc();
  if (!d->data) return nullptr;
  const void* base = d->data->device == Device::gpu ? host_data(*d->data) : d->data->ptr;
  return static_cast<const char*>(base) + d->offset * a.itemsize();
}

}  // namespace nuvec::backend
