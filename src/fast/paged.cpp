// fast::paged_write and fast::paged_attention (docs/fast.md, "Paged
// attention"): a key/value cache held in fixed-size blocks of a shared pool,
// as composites of scatter, take and scaled_dot_product_attention. The
// integer arguments (block tables, positions, lengths) are read on the host
// when the op is built: the composite's shapes depend on them, and reading
// them lets an out-of-range block or length fail the call instead of
// touching memory it should not.
#include <sstream>
#include <variant>

#include "nuvec/fast.h"
#include "nuvec/ops/ops.h"
#include "nuvec/primitives/indexing.h"
#include "ops/builder.h"
#include "ops/indexing_impl.h"

namespace nuvec::fast {

using ops::impl::fail;

namespace {

std::string shape_of(const Array& a) {
  std::ostringstream os;
  os << a.shape();
  return os.str();
}

// The values of an integer array of rank `rank`, or the failed array that
// says why they cannot be read.
std::variant<std::vector<int64_t>, Array> read_ints(const Array& a,
                                                    const char* name, int rank,
                                                    const char* op,
                                                    Location loc) {
  if (a.is_failed()) return a;
  if (!is_integer(a.dtype()))
    return fail(ErrorKind::unsupported_dtype,
                std::string(name) + " must be an integer array, not " +
                    std::string(dtype_name(a.dtype())),
                op, loc);
  if (a.ndim() != rank)
    return fail(ErrorKind::invalid_shape,
                std::string(name) + " must have " + std::to_string(rank) +
                    (rank == 1 ? " dimension" : " dimensions") +
                    " but has shape " + shape_of(a),
                op, loc);
  try {
    // Evaluates a lazy argument: its values decide the graph (a boundary,
    // so not traceable by compile or vmap).
    return ops::astype(a, int64).reshape({-1}).to_vector<int64_t>();
  } catch (const Error& e) {
    return fail(e.kind(),
                std::string(name) + " could not be read: " + e.message(), op,
                loc);
  }
}

// Checks the pools [num_blocks, Hkv, block_size, D] (v may have its own D).
std::optional<Array> check_pools(const Array& kp, const Array& vp,
                                 const char* op, Location loc) {
  if (kp.is_failed()) return kp;
  if (vp.is_failed()) return vp;
  if (kp.ndim() != 4 || vp.ndim() != 4)
    return fail(ErrorKind::invalid_shape,
                "k_pool and v_pool must have 4 dimensions [num_blocks, Hkv, "
                "block_size, D]; got " +
                    shape_of(kp) + " and " + shape_of(vp),
                op, loc);
  if (kp.shape(0) != vp.shape(0) || kp.shape(1) != vp.shape(1) ||
      kp.shape(2) != vp.shape(2))
    return fail(
        ErrorKind::shape_mismatch,
        "k_pool and v_pool must have one num_blocks, Hkv and block_size; got " +
            shape_of(kp) + " and " + shape_of(vp),
        op, loc);
  if (kp.shape(2) <= 0)
    return fail(ErrorKind::invalid_argument,
                "block_size (k_pool's third dimension) must be positive", op,
                loc);
  return std::nullopt;
}

// The pool block of logical block `j` of row `b`, or a failed array.
std::variant<int, Array> pool_block(const std::vector<int64_t>& table,
                                    int max_blocks, int b, int j,
                                    int num_blocks, const char* op,
                                    Location loc) {
  const int64_t id =
      table[static_cast<size_t>(b) * static_cast<size_t>(max_blocks) +
            static_cast<size_t>(j)];
  if (id < 0 || id >= num_blocks)
    return fail(ErrorKind::out_of_range,
                "block_table[" + std::to_string(b) + ", " + std::to_string(j) +
                    "] = " + std::to_string(id) +
                    " is not a block of the pool (num_blocks " +
                    std::to_string(num_blocks) + ")",
                op, loc);
  return static_cast<int>(id);
}

}  // namespace

std::pair<Array, Array> paged_write(const Array& k_pool, const Array& v_pool,
                                    const Array& k, const Array& v,
                                    const Array& block_table,
                                    const Array& positions, StreamOrDevice s,
                                    Location loc) {
  const char* op = "paged_write";
  auto both = [](const Array& a) { return std::pair<Array, Array>{a, a}; };
  if (auto f = check_pools(k_pool, v_pool, op, loc)) return both(*f);
  if (k.is_failed()) return both(k);
  if (v.is_failed()) return both(v);
  if (k.ndim() != 4 || v.ndim() != 4 || k.shape(0) != v.shape(0) ||
      k.shape(2) != v.shape(2))
    return both(fail(ErrorKind::invalid_shape,
                     "k and v must be [B, Hkv, L, D] of one B and L; got " +
                         shape_of(k) + " and " + shape_of(v),
                     op, loc));
  if (k.shape(1) != k_pool.shape(1) || k.shape(3) != k_pool.shape(3) ||
      v.shape(1) != v_pool.shape(1) || v.shape(3) != v_pool.shape(3))
    return both(
        fail(ErrorKind::shape_mismatch,
             "k " + shape_of(k) + " and v " + shape_of(v) +
                 " must have the heads and head dimensions of the pools " +
                 shape_of(k_pool) + " and " + shape_of(v_pool),
             op, loc));
  const int B = k.shape(0), L = k.shape(2), bs = k_pool.shape(2),
            nb = k_pool.shape(0);
  auto table = read_ints(block_table, "block_table", 2, op, loc);
  if (auto* f = std::get_if<Array>(&table)) return both(*f);
  auto pos = read_ints(positions, "positions", 1, op, loc);
  if (auto* f = std::get_if<Array>(&pos)) return both(*f);
  if (block_table.shape(0) != B || positions.shape(0) != B)
    return both(fail(ErrorKind::shape_mismatch,
                     "block_table " + shape_of(block_table) +
                         " and positions " + shape_of(positions) +
                         " must have one row per sequence of k (" +
                         std::to_string(B) + ")",
                     op, loc));
  const int M = block_table.shape(1);
  const auto& t = std::get<std::vector<int64_t>>(table);
  const auto& p = std::get<std::vector<int64_t>>(pos);
  // The pool slot (block, offset in the block) of every new token, row-major.
  std::vector<int32_t> blk, slot;
  blk.reserve(static_cast<size_t>(B) * static_cast<size_t>(L));
  slot.reserve(blk.capacity());
  for (int b = 0; b < B; ++b) {
    const int64_t start = p[static_cast<size_t>(b)];
    if (start < 0 || start + L > int64_t(M) * bs)
      return both(fail(ErrorKind::out_of_range,
                       "positions[" + std::to_string(b) +
                           "] = " + std::to_string(start) + " with " +
                           std::to_string(L) + " new tokens does not fit the " +
                           std::to_string(M) + " blocks of " +
                           std::to_string(bs) + " positions of its block table",
                       op, loc));
    for (int l = 0; l < L; ++l) {
      const int64_t at = start + l;
      auto id = pool_block(t, M, b, static_cast<int>(at / bs), nb, op, loc);
      if (auto* f = std::get_if<Array>(&id)) return both(*f);
      blk.push_back(std::get<int>(id));
      slot.push_back(static_cast<int32_t>(at % bs));
    }
  }
  if (blk.empty()) return {k_pool, v_pool};
  const int N = static_cast<int>(blk.size());
  // One Scatter over the flat pool, its element positions made here from
  // the slots (ops::scatter would select them from an arange the size of
  // the whole pool); updates [N, Hkv, D], a token's heads per slot, in
  // row-major order (a slot written twice keeps the last write, as
  // ops::scatter).
  auto write = [&](const Array& pool, const Array& x) {
    const int64_t H = pool.shape(1), D = pool.shape(3);
    auto flat_positions = [&](auto zero) {
      using I = decltype(zero);
      std::vector<I> at;
      at.reserve(static_cast<size_t>(N * H * D));
      for (int i = 0; i < N; ++i)
        for (int64_t h = 0; h < H; ++h) {
          const int64_t row = ((int64_t(blk[size_t(i)]) * H + h) * bs + slot[size_t(i)]) * D;
          for (int64_t d = 0; d < D; ++d) at.push_back(static_cast<I>(row + d));
        }
      return array(at, Shape{N, static_cast<int>(H), static_cast<int>(D)});
    };
    Array at = pool.size() > 2147483647 ? flat_positions(int64_t{}) : flat_positions(int32_t{});
    Array upd = ops::astype(ops::reshape(ops::transpose(x, {0, 2, 1, 3}, s, loc),
                                         {N, static_cast<int>(H), static_cast<int>(D)}, s, loc),
                            pool.dtype(), s, loc);
    return ops::impl::scatter_flat(pool, at, upd, Scatter::Type::set, op, s, loc);
  };
  return {write(k_pool, k), write(v_pool, v)};
}

Array paged_attention(const Array& q, const Array& k_pool, const Array& v_pool,
                      const Array& block_table, const Array& lengths,
                      float scale, const std::string& mask_mode,
                      StreamOrDevice s, Location loc) {
  const char* op = "paged_attention";
  if (auto f = check_pools(k_pool, v_pool, op, loc)) return *f;
  if (q.is_failed()) return q;
  if (q.ndim() != 4)
    return fail(
        ErrorKind::invalid_shape,
        "q must have 4 dimensions [B, Hq, L, D] but has shape " + shape_of(q),
        op, loc);
  if (q.shape(3) != k_pool.shape(3))
    return fail(ErrorKind::shape_mismatch,
                "q " + shape_of(q) + " must have k_pool's head dimension " +
                    std::to_string(k_pool.shape(3)),
                op, loc);
  if (k_pool.shape(1) == 0 || q.shape(1) % k_pool.shape(1) != 0)
    return fail(ErrorKind::shape_mismatch,
                "the query heads (" + std::to_string(q.shape(1)) +
                    ") must be a multiple of the key/value heads (" +
                    std::to_string(k_pool.shape(1)) + ")",
                op, loc);
  if (mask_mode != "" && mask_mode != "causal")
    return fail(
        ErrorKind::invalid_argument,
        "mask_mode must be \"\" or \"causal\", not \"" + mask_mode + "\"", op,
        loc);
  const int B = q.shape(0), Hq = q.shape(1), L = q.shape(2), D = q.shape(3);
  const int Hkv = k_pool.shape(1), bs = k_pool.shape(2), nb = k_pool.shape(0);
  auto table = read_ints(block_table, "block_table", 2, op, loc);
  if (auto* f = std::get_if<Array>(&table)) return *f;
  auto lens = read_ints(lengths, "lengths", 1, op, loc);
  if (auto* f = std::get_if<Array>(&lens)) return *f;
  if (block_table.shape(0) != B || lengths.shape(0) != B)
    return fail(ErrorKind::shape_mismatch,
                "block_table " + shape_of(block_table) + " and lengths " +
                    shape_of(lengths) +
                    " must have one row per sequence of q (" +
                    std::to_string(B) + ")",
                op, loc);
  const int M = block_table.shape(1);
  const auto& t = std::get<std::vector<int64_t>>(table);
  const auto& n = std::get<std::vector<int64_t>>(lens);
  const bool causal = mask_mode == "causal" && L > 1;
  std::vector<Array> rows;
  rows.reserve(static_cast<size_t>(B));
  for (int b = 0; b < B; ++b) {
    const int64_t len = n[static_cast<size_t>(b)];
    if (len < 0 || len > int64_t(M) * bs)
      return fail(ErrorKind::out_of_range,
                  "lengths[" + std::to_string(b) +
                      "] = " + std::to_string(len) + " is beyond the " +
                      std::to_string(M) + " blocks of " + std::to_string(bs) +
                      " positions of its block table",
                  op, loc);
    if (causal && len < L)
      return fail(ErrorKind::invalid_argument,
                  "causal attention of " + std::to_string(L) +
                      " queries needs at least as many " + "keys; lengths[" +
                      std::to_string(b) + "] = " + std::to_string(len),
                  op, loc);
    const int used = static_cast<int>((len + bs - 1) / bs);
    std::vector<int32_t> ids;
    for (int j = 0; j < used; ++j) {
      auto id = pool_block(t, M, b, j, nb, op, loc);
      if (auto* f = std::get_if<Array>(&id)) return *f;
      ids.push_back(std::get<int>(id));
    }
    // The row's keys, contiguous from key 0: its blocks in order, cut at
    // its length. Then attention of this row alone: its solo bits.
    Array idx = array(ids, Shape{used});
    auto contiguous = [&](const Array& pool) {
      Array g =
          ops::transpose(ops::take(pool, idx, 0, s, loc), {1, 0, 2, 3}, s, loc);
      g = ops::reshape(g, {1, Hkv, used * bs, pool.shape(3)}, s, loc);
      return ops::slice(g, Shape{0, 0, 0, 0},
                        Shape{1, Hkv, static_cast<int>(len), pool.shape(3)}, s,
                        loc);
    };
    Array qb = ops::slice(q, Shape{b, 0, 0, 0}, Shape{b + 1, Hq, L, D}, s, loc);
    rows.push_back(scaled_dot_product_attention(
        qb, contiguous(k_pool), contiguous(v_pool), scale,
        causal ? "causal" : "", std::nullopt, std::nullopt, false, s, loc));
  }
  if (rows.empty()) {
    DType dt =
        promote_types(promote_types(q.dtype(), k_pool.dtype()), v_pool.dtype());
    return ops::zeros({0, Hq, L, v_pool.shape(3)}, dt, s, loc);
  }
  return rows.size() == 1 ? rows[0] : ops::concatenate(rows, 0, s, loc);
}

}  // namespace nuvec::fast
