// FusedReduce on the CPU: the region's stages (FusedReduce::stages) over
// blocks of rows. Rows of at most reduce_row::kBlock elements are run one
// block of rows at a time through every stage, so a row's elements are
// read from memory once and its intermediates stay in cache; longer rows
// run stage after stage over (row, block of kBlock) units. Each reduction
// is reduce_row's arithmetic for a row of its length, as the Reduce kernel
// computes it, and each element-wise value is the region's generated kernel
// (or the interpreter), so results are the unfused graph's bits.
#include <algorithm>
#include <cstring>
#include <optional>

#include "backend/backend.h"
#include "backend/row_stride.h"
#include "backend/cpu/cpu.h"
#include "backend/cpu/reduce_row.h"
#include "backend/reduce_op.h"
#include "core/thread_pool.h"
#include "nuvec/kernels/cast.h"

namespace nuvec::cpu {

namespace {

using RT = Reduce::Type;
constexpr int64_t kUnitElems = 1 << 14;  // elements of a block of short rows

// A value seen as rows: element (r, c) at offset + r * rs + c * cs of data.
struct Operand {
  std::shared_ptr<Data> data;
  int64_t offset = 0, rs = 0, cs = 0;
  DType dtype = float32;
  const char* at(int64_t r, int64_t c) const {
    return static_cast<const char*>(data->ptr) + (offset + r * rs + c * cs) * dtype.size();
  }
};

using backend::one_stride;

// Input `a` as rows of S (split at `k`); a layout whose kept or reduced
// axes do not collapse to one stride is copied densely first.
Operand operand_of(const Array& a, const Shape& S, int k) {
  const int n = static_cast<int>(S.size()), m = a.ndim();
  Strides st(n, 0);
  for (int i = 0; i < m; ++i)
    if (a.shape()[i] == S[n - m + i]) st[n - m + i] = a.strides()[i];
  Operand o{a.desc()->data, a.desc()->offset, 0, 0, a.dtype()};
  auto rs = one_stride(S, st, 0, k), cs = one_stride(S, st, k, n);
  if (rs && cs) {
    o.rs = *rs;
    o.cs = *cs;
    return o;
  }
  auto view = std::make_shared<ArrayDesc>(*a.desc());
  view->node = nullptr;
  view->shape = S;
  view->strides = st;
  view->size = shape_size(S);
  view->row_contiguous = false;
  auto dense = std::make_shared<ArrayDesc>();
  dense->shape = S;
  dense->strides = row_major_strides(S);
  dense->size = view->size;
  dense->dtype = a.dtype();
  dense->data = allocate_data(static_cast<size_t>(view->size) * a.itemsize());
  std::vector<Array> outs{Array(dense)};
  backend::eval_cpu(Copy(), {Array(view)}, outs);
  int64_t row = 1;
  for (int d = k; d < n; ++d) row *= S[d];
  return Operand{dense->data, 0, row, 1, a.dtype()};
}

std::shared_ptr<Data> borrowed(void* ptr) {
  auto d = std::make_shared<Data>();
  d->ptr = ptr;
  return d;
}

Array view_of(const Operand& o, int64_t r0, int64_t c0, Shape shape, Strides strides) {
  auto d = std::make_shared<ArrayDesc>();
  d->dtype = o.dtype;
  d->data = o.data;
  d->offset = o.offset + r0 * o.rs + c0 * o.cs;
  d->shape = std::move(shape);
  d->strides = std::move(strides);
  d->size = shape_size(d->shape);
  d->row_contiguous = is_row_contiguous(d->shape, d->strides);
  return Array(std::move(d));
}

// Where a stage writes a result: element (r, c) of the unit at base + r * rs + c.
struct Dest {
  char* base;
  int64_t rs;
  DType dtype;
};

bool generated_fits(const FusedCpuKernel* k, const RowStage& st) {
  return k && k->input_dtypes == st.arg_dtypes;
}

// A map stage over rows [0, rows) x columns [c0, c0 + len) of the unit
// starting at row r0.
void run_map(const RowStage& st, const std::vector<const Operand*>& src, int64_t r0, int64_t rows,
             int64_t c0, int64_t len, const std::vector<Dest>& dst) {
  const size_t n_in = st.args.size(), n_out = dst.size();
  auto k = st.program->cpu_kernel();
  if (generated_fits(k.get(), st)) {
    std::vector<const void*> ip(n_in);
    std::vector<void*> op(n_out);
    std::vector<long> strides(n_in);
    bool dense = k->rows != nullptr;
    for (size_t a = 0; a < n_in; ++a) {
      strides[a] = st.row_scalar[a] ? 0 : static_cast<long>(src[a]->cs);
      dense = dense && (st.row_scalar[a] || src[a]->cs == 1);
    }
    for (int64_t r = 0; r < rows; ++r) {
      for (size_t a = 0; a < n_in; ++a) ip[a] = src[a]->at(r0 + r, st.row_scalar[a] ? 0 : c0);
      for (size_t j = 0; j < n_out; ++j) op[j] = dst[j].base + r * dst[j].rs * dst[j].dtype.size();
      if (dense) k->rows(ip.data(), op.data(), static_cast<long>(len));
      else k->strided(ip.data(), op.data(), strides.data(), static_cast<long>(len));
    }
    nuvec::detail::fused_runs(true).fetch_add(1, std::memory_order_relaxed);
    return;
  }
  Arrays in, out;
  for (size_t a = 0; a < n_in; ++a) {
    int64_t cs = st.row_scalar[a] ? 0 : src[a]->cs;
    in.push_back(view_of(*src[a], r0, st.row_scalar[a] ? 0 : c0, {static_cast<int>(rows), static_cast<int>(len)},
                         {src[a]->rs, cs}));
  }
  for (size_t j = 0; j < n_out; ++j)  // (the unit's rows are dense: rs == len)
    out.push_back(view_of(Operand{borrowed(dst[j].base), 0, len, 1, dst[j].dtype}, 0, 0,
                          {static_cast<int>(rows), static_cast<int>(len)}, {len, 1}));
  eval(*st.program, in, out);
}

// A scalars stage over rows [r0, r0 + rows).
void run_scalars(const RowStage& st, const std::vector<const Operand*>& src, int64_t r0, int64_t rows,
                 const std::vector<Dest>& dst) {
  const size_t n_in = st.args.size(), n_out = dst.size();
  auto k = st.program->cpu_kernel();
  if (generated_fits(k.get(), st)) {
    std::vector<const void*> ip(n_in);
    std::vector<void*> op(n_out);
    std::vector<long> strides(n_in);
    for (size_t a = 0; a < n_in; ++a) {
      ip[a] = src[a]->at(r0, 0);
      strides[a] = static_cast<long>(src[a]->rs);
    }
    for (size_t j = 0; j < n_out; ++j) op[j] = dst[j].base;
    k->strided(ip.data(), op.data(), strides.data(), static_cast<long>(rows));
    return;
  }
  Arrays in, out;
  for (size_t a = 0; a < n_in; ++a) in.push_back(view_of(*src[a], r0, 0, {static_cast<int>(rows)}, {src[a]->rs}));
  for (size_t j = 0; j < n_out; ++j)
    out.push_back(view_of(Operand{borrowed(dst[j].base), 0, 1, 0, dst[j].dtype}, 0, 0,
                          {static_cast<int>(rows)}, {1}));
  eval(*st.program, in, out);
}

template <RT type, class F>
void with_types(DType in, F&& f) {
  dispatch_dtype(in, [&](auto tag) {
    using In = typename decltype(tag)::type;
    using Out = type_of_t<reduce_output_dtype(type, dtype_v<In>).val>;
    using A = backend::reduce_acc_t<In, Out>;
    f(static_cast<In*>(nullptr), static_cast<Out*>(nullptr), static_cast<A*>(nullptr));
  });
}

template <class F>
void with_type(RT t, F&& f) {
  switch (t) {
    case RT::sum: return f(std::integral_constant<RT, RT::sum>{});
    case RT::prod: return f(std::integral_constant<RT, RT::prod>{});
    case RT::max: return f(std::integral_constant<RT, RT::max>{});
    case RT::min: return f(std::integral_constant<RT, RT::min>{});
    case RT::all: return f(std::integral_constant<RT, RT::all>{});
    case RT::any: return f(std::integral_constant<RT, RT::any>{});
  }
}

// Rows row0 + [0, rows) of len elements at `values` (dense) reduced: the
// result of row r to out[r] (nb == 1: the output type) or, as a partial of
// block b, to out[r * nb + b] (the accumulator type).
void reduce_rows(RT t, DType in, const void* values, int64_t row0, int64_t rows, int64_t len, void* out,
                 int64_t nb, int64_t b) {
  with_type(t, [&](auto tc) {
    constexpr RT type = decltype(tc)::value;
    with_types<type>(in, [&](auto* in_t, auto* out_t, auto* acc_t) {
      using In = std::remove_pointer_t<decltype(in_t)>;
      using Out = std::remove_pointer_t<decltype(out_t)>;
      using A = std::remove_pointer_t<decltype(acc_t)>;
      const In* x = static_cast<const In*>(values);
      for (int64_t r = 0; r < rows; ++r) {
        A v = reduce_row::reduce_run<type, A>(x + r * len, len);
        if (nb == 1) static_cast<Out*>(out)[row0 + r] = kernels::Cast<Out>{}(v);
        else static_cast<A*>(out)[(row0 + r) * nb + b] = v;
      }
    });
  });
}

// The partials of rows [r0, r1) combined in reduce_row's tree.
void combine_rows(RT t, DType in, void* part, int64_t r0, int64_t r1, int64_t nb, void* out) {
  with_type(t, [&](auto tc) {
    constexpr RT type = decltype(tc)::value;
    with_types<type>(in, [&](auto*, auto* out_t, auto* acc_t) {
      using Out = std::remove_pointer_t<decltype(out_t)>;
      using A = std::remove_pointer_t<decltype(acc_t)>;
      for (int64_t r = r0; r < r1; ++r)
        static_cast<Out*>(out)[r] =
            kernels::Cast<Out>{}(reduce_row::combine_blocks<type>(static_cast<A*>(part) + r * nb, nb));
    });
  });
}

char* element(const Array& a, int64_t i) {
  return static_cast<char*>(a.desc()->data->ptr) + (a.desc()->offset + i) * a.itemsize();
}

// Per-thread scratch for a unit's reduced values (grown, never shrunk).
unsigned char* unit_buffer(size_t bytes) {
  thread_local std::vector<unsigned char> buf;
  if (buf.size() < bytes + 64) buf.resize(bytes + 64);
  return reinterpret_cast<unsigned char*>((reinterpret_cast<uintptr_t>(buf.data()) + 63) & ~uintptr_t(63));
}

}  // namespace

void eval(const FusedReduce& p, const Arrays& in, Arrays& out) {
  const Shape& S = p.shape();
  const int k = p.split();
  int64_t R = 1, m = 1;
  for (int d = 0; d < static_cast<int>(S.size()); ++d) (d < k ? R : m) *= S[d];
  if (R == 0 || m == 0) return;
  const int64_t nb = (m + reduce_row::kBlock - 1) / reduce_row::kBlock;

  // Every value a stage reads, as rows: the inputs, and the reduced values
  // (one per row, in the output they are returned as or in a buffer).
  std::vector<Operand> values(p.num_values());
  std::vector<int> output_of(p.num_values(), -1);
  for (size_t j = 0; j < p.outputs().size(); ++j) output_of[p.outputs()[j]] = static_cast<int>(j);
  for (int i = 0; i < p.num_inputs(); ++i) values[i] = operand_of(in[i], S, k);
  for (const auto& st : p.stages()) {
    if (st.kind == RowStage::Kind::map) continue;
    for (int v : st.results) {
      Operand& o = values[v];
      o.dtype = p.value_dtype(v);
      o.rs = 1;
      if (int j = output_of[v]; j >= 0) {
        o.data = out[j].desc()->data;
        o.offset = out[j].desc()->offset;
      } else {
        o.data = allocate_data(static_cast<size_t>(R) * o.dtype.size());
      }
    }
  }
  auto sources = [&](const RowStage& st) {
    std::vector<const Operand*> s;
    for (int a : st.args) s.push_back(&values[a]);
    return s;
  };
  auto scalar_dests = [&](const RowStage& st, int64_t r0) {
    std::vector<Dest> d;
    for (int v : st.results) {
      const Operand& o = values[v];
      d.push_back({static_cast<char*>(o.data->ptr) + (o.offset + r0) * o.dtype.size(), 1, o.dtype});
    }
    return d;
  };
  auto output_dests = [&](const RowStage& st, int64_t r0, int64_t c0) {
    std::vector<Dest> d;
    for (int v : st.results) d.push_back({element(out[output_of[v]], r0 * m + c0), m, p.value_dtype(v)});
    return d;
  };
  const auto& stages = p.stages();

  if (nb == 1) {  // blocks of rows through every stage
    const int64_t per = std::clamp<int64_t>(kUnitElems / m, 1, R);
    parallel_for((R + per - 1) / per, 1, [&](long long u0, long long u1) {
      for (long long u = u0; u < u1; ++u) {
        const int64_t r0 = u * per, rows = std::min(per, R - r0);
        for (size_t s = 0; s < stages.size(); ++s) {
          const RowStage& st = stages[s];
          if (st.kind == RowStage::Kind::scalars) {
            run_scalars(st, sources(st), r0, rows, scalar_dests(st, r0));
          } else if (st.kind == RowStage::Kind::map && s + 1 < stages.size() &&
                     stages[s + 1].kind == RowStage::Kind::reduce) {
            const RowStage& red = stages[s + 1];
            DType dt = p.value_dtype(red.args[0]);
            unsigned char* buf = unit_buffer(static_cast<size_t>(rows * m) * dt.size());
            run_map(st, sources(st), r0, rows, 0, m, {{reinterpret_cast<char*>(buf), m, dt}});
            const Operand& o = values[red.results[0]];
            reduce_rows(red.type, dt, buf, r0, rows, m,
                        static_cast<char*>(o.data->ptr) + o.offset * o.dtype.size(), 1, 0);
            ++s;
          } else if (st.kind == RowStage::Kind::map) {
            run_map(st, sources(st), r0, rows, 0, m, output_dests(st, r0, 0));
          }
        }
      }
    });
    return;
  }

  // Long rows: stage after stage over (row, block) units.
  const int64_t B = reduce_row::kBlock;
  for (size_t s = 0; s < stages.size(); ++s) {
    const RowStage& st = stages[s];
    if (st.kind == RowStage::Kind::scalars) {
      parallel_for(R, std::max<int64_t>(1, kUnitElems), [&](long long r0, long long r1) {
        run_scalars(st, sources(st), r0, r1 - r0, scalar_dests(st, r0));
      });
      continue;
    }
    if (st.kind != RowStage::Kind::map) continue;
    const bool reduces = s + 1 < stages.size() && stages[s + 1].kind == RowStage::Kind::reduce;
    if (!reduces) {
      parallel_for(R * nb, 1, [&](long long u0, long long u1) {
        for (long long u = u0; u < u1; ++u) {
          int64_t r = u / nb, c0 = (u % nb) * B;
          run_map(st, sources(st), r, 1, c0, std::min(B, m - c0), output_dests(st, r, c0));
        }
      });
      continue;
    }
    const RowStage& red = stages[s + 1];
    DType dt = p.value_dtype(red.args[0]);
    auto part = allocate_data(static_cast<size_t>(R * nb) * 16);
    parallel_for(R * nb, 1, [&](long long u0, long long u1) {
      for (long long u = u0; u < u1; ++u) {
        int64_t r = u / nb, b = u % nb, c0 = b * B, len = std::min(B, m - c0);
        unsigned char* buf = unit_buffer(static_cast<size_t>(len) * dt.size());
        run_map(st, sources(st), r, 1, c0, len, {{reinterpret_cast<char*>(buf), len, dt}});
        reduce_rows(red.type, dt, buf, r, 1, len, part->ptr, nb, b);
      }
    });
    const Operand& o = values[red.results[0]];
    combine_rows(red.type, dt, part->ptr, 0, R, nb,
                 static_cast<char*>(o.data->ptr) + o.offset * o.dtype.size());
    ++s;
  }
}

}  // namespace nuvec::cpu
