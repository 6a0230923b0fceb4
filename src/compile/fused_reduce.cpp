// The FusedReduce primitive: its plan (the stages a backend runs), shape
// rule, equality, and transform rules (by expanding the region into the
// nodes it was traced from).
#include "nuvec/primitives/fused_reduce.h"

#include <algorithm>
#include <unordered_map>

#include "nuvec/primitives/params.h"
#include "compile/expanded_rules.h"
#include "primitives/rules.h"

namespace nuvec {

namespace {

// Whether `s` (aligned to the end of `full`) has size 1 along full's axes
// `split`.. (it then holds one value per row).
bool one_per_row(const Shape& s, const Shape& full, int split) {
  const int n = static_cast<int>(full.size()), m = static_cast<int>(s.size());
  for (int d = std::max(split, n - m); d < n; ++d)
    if (s[d - (n - m)] != 1) return false;
  return true;
}

}  // namespace

FusedReduce::FusedReduce(std::vector<Shape> input_shapes, std::vector<DType> input_dtypes,
                         Shape shape, int split, std::vector<RowMember> members,
                         std::vector<int> outputs)
    : num_inputs_(static_cast<int>(input_shapes.size())),
      input_shapes_(std::move(input_shapes)),
      shape_(std::move(shape)),
      split_(split),
      members_(std::move(members)),
      outputs_(std::move(outputs)) {
  for (int i = 0; i < num_inputs_; ++i) {
    dtypes_.push_back(input_dtypes[i]);
    scalar_.push_back(one_per_row(input_shapes_[i], shape_, split_));
    maker_.push_back(-1);
  }
  for (size_t m = 0; m < members_.size(); ++m) {
    const RowMember& mb = members_[m];
    first_.push_back(num_values());
    if (mb.primitive->id() == PrimitiveId::Reduce) {
      auto& r = static_cast<const Reduce&>(*mb.primitive);
      dtypes_.push_back(reduce_output_dtype(r.type(), dtypes_[mb.args[0]]));
      scalar_.push_back(true);
      maker_.push_back(static_cast<int>(m));
      continue;
    }
    auto& f = static_cast<const Fused&>(*mb.primitive);
    bool scalar = true;
    for (int a : mb.args) scalar = scalar && scalar_[a];
    for (int o : f.outputs()) {
      dtypes_.push_back(o < f.num_inputs() ? dtypes_[mb.args[o]] : f.ops()[o - f.num_inputs()].dtype);
      scalar_.push_back(scalar);
      maker_.push_back(static_cast<int>(m));
    }
  }
  plan();
}

Shape FusedReduce::reduced_shape() const {
  Shape s = shape_;
  for (size_t d = split_; d < s.size(); ++d) s[d] = 1;
  return s;
}

// The element-wise program that computes `targets` (values at S) from
// inputs and values that hold one per row, inlining the members that make
// them; `args` receives the region values it reads, in its input order.
std::shared_ptr<const Fused> FusedReduce::compose(const std::vector<int>& targets,
                                                  std::vector<int>& args) const {
  auto leaf = [&](int v) { return maker_[v] < 0 || scalar_[v]; };
  std::vector<char> need(members_.size(), 0), seen(num_values(), 0);
  std::vector<int> stack(targets.begin(), targets.end());
  while (!stack.empty()) {
    int v = stack.back();
    stack.pop_back();
    if (seen[v]) continue;
    seen[v] = 1;
    if (leaf(v) || need[maker_[v]]) continue;
    need[maker_[v]] = 1;
    for (int a : members_[maker_[v]].args) stack.push_back(a);
  }
  std::unordered_map<int, int> local;  // region value -> program value
  args.clear();
  auto add_leaf = [&](int v) {
    if (local.emplace(v, static_cast<int>(args.size())).second) args.push_back(v);
  };
  for (size_t m = 0; m < members_.size(); ++m)
    if (need[m])
      for (int a : members_[m].args)
        if (leaf(a)) add_leaf(a);
  for (int t : targets)
    if (leaf(t)) add_leaf(t);
  const int n_in = static_cast<int>(args.size());
  int next = n_in;
  std::vector<FusedOp> ops;
  std::vector<FusedLiteral> literals;
  for (size_t m = 0; m < members_.size(); ++m) {
    if (!need[m]) continue;
    const RowMember& mb = members_[m];
    auto& f = static_cast<const Fused&>(*mb.primitive);
    std::vector<int> map(f.num_inputs() + f.ops().size());
    for (int i = 0; i < f.num_inputs(); ++i) map[i] = local.at(mb.args[i]);
    for (size_t j = 0; j < f.ops().size(); ++j) {
      FusedOp op{f.ops()[j].primitive, {}, f.ops()[j].dtype};
      for (int a : f.ops()[j].args) op.args.push_back(map[a]);
      ops.push_back(std::move(op));
      map[f.num_inputs() + j] = next++;
    }
    for (size_t o = 0; o < f.outputs().size(); ++o)
      local.emplace(first_[m] + static_cast<int>(o), map[f.outputs()[o]]);
    for (const auto& l : f.literals()) {
      FusedLiteral lit{map[l.input], l.bits};
      if (lit.input < n_in && std::find(literals.begin(), literals.end(), lit) == literals.end())
        literals.push_back(lit);
    }
  }
  std::vector<int> outs;
  for (int t : targets) outs.push_back(local.at(t));
  return std::make_shared<const Fused>(n_in, std::move(ops), std::move(outs), std::move(literals));
}

void FusedReduce::plan() {
  auto stage_of = [&](RowStage::Kind kind, std::shared_ptr<const Fused> program,
                      std::vector<int> args, std::vector<int> results) {
    RowStage st;
    st.kind = kind;
    st.program = std::move(program);
    st.args = std::move(args);
    st.results = std::move(results);
    for (int a : st.args) {
      st.arg_dtypes.push_back(dtypes_[a]);
      st.row_scalar.push_back(scalar_[a]);
    }
    stages_.push_back(std::move(st));
  };
  for (size_t m = 0; m < members_.size(); ++m) {
    const RowMember& mb = members_[m];
    if (mb.primitive->id() == PrimitiveId::Reduce) {
      std::vector<int> args;
      auto program = compose({mb.args[0]}, args);
      stage_of(RowStage::Kind::map, std::move(program), std::move(args), {mb.args[0]});
      RowStage r;
      r.kind = RowStage::Kind::reduce;
      r.args = {mb.args[0]};
      r.results = {first_[m]};
      r.arg_dtypes = {dtypes_[mb.args[0]]};
      r.type = static_cast<const Reduce&>(*mb.primitive).type();
      stages_.push_back(std::move(r));
    } else if (scalar_[first_[m]]) {
      auto f = std::static_pointer_cast<const Fused>(mb.primitive);
      std::vector<int> results;
      for (size_t o = 0; o < f->outputs().size(); ++o) results.push_back(first_[m] + static_cast<int>(o));
      stage_of(RowStage::Kind::scalars, f, mb.args, std::move(results));
    }
  }
  std::vector<int> full;
  for (int o : outputs_)
    if (!scalar_[o] && std::find(full.begin(), full.end(), o) == full.end()) full.push_back(o);
  if (!full.empty()) {
    std::vector<int> args;
    auto program = compose(full, args);
    stage_of(RowStage::Kind::map, std::move(program), std::move(args), full);
  }
}

Expected<std::vector<OutputSpec>> FusedReduce::output_specs(const std::vector<Array>& inputs) const {
  if (static_cast<int>(inputs.size()) != num_inputs_)
    return op_error(ErrorKind::internal, "a fused reduction got the wrong number of inputs");
  for (int i = 0; i < num_inputs_; ++i)
    if (inputs[i].shape() != input_shapes_[i] || !(inputs[i].dtype() == dtypes_[i]))
      return op_error(ErrorKind::internal, "a fused reduction got an input of another shape or dtype");
  std::vector<OutputSpec> out;
  Shape reduced = reduced_shape();
  for (int v : outputs_) {
    OutputSpec s;
    s.shape = scalar_[v] ? reduced : shape_;
    s.dtype = dtypes_[v];
    out.push_back(std::move(s));
  }
  return out;
}

bool FusedReduce::params_equal(const Primitive& o) const {
  auto& f = static_cast<const FusedReduce&>(o);
  if (f.input_shapes_ != input_shapes_ || f.dtypes_.size() != dtypes_.size() || f.shape_ != shape_ ||
      f.split_ != split_ || f.outputs_ != outputs_ || f.members_.size() != members_.size())
    return false;
  for (int i = 0; i < num_inputs_; ++i)
    if (!(f.dtypes_[i] == dtypes_[i])) return false;
  for (size_t m = 0; m < members_.size(); ++m)
    if (f.members_[m].args != members_[m].args ||
        !f.members_[m].primitive->is_equivalent(*members_[m].primitive))
      return false;
  return true;
}

size_t FusedReduce::params_hash() const {
  size_t h = params::combine(params::hash_vector(shape_), static_cast<size_t>(split_));
  h = params::combine(h, params::hash_vector(outputs_));
  for (const auto& m : members_) {
    h = params::combine(h, static_cast<size_t>(m.primitive->id()));
    h = params::combine(h, m.primitive->params_hash());
    h = params::combine(h, params::hash_vector(m.args));
  }
  return h;
}

void FusedReduce::print_params(std::ostream& os) const {
  os << stages_.size() << " stages over rows of " << shape_ << " from axis " << split_;
}

std::shared_ptr<const FusedRowsGpuKernel> FusedReduce::gpu_kernel() const {
  std::lock_guard<std::mutex> lock(slot_->mu);
  return slot_->gpu;
}

void FusedReduce::set_gpu_kernel(std::shared_ptr<const FusedRowsGpuKernel> k) const {
  std::lock_guard<std::mutex> lock(slot_->mu);
  slot_->gpu = std::move(k);
}

Arrays FusedReduce::expand(const Arrays& inputs) const {
  Arrays values(inputs.begin(), inputs.end());
  for (const auto& m : members_) {
    Arrays args;
    for (int a : m.args) args.push_back(values[a]);
    Arrays made = rules::rebuild(*m.primitive, std::move(args));
    values.insert(values.end(), made.begin(), made.end());
  }
  Arrays out;
  for (int v : outputs_) out.push_back(values[v]);
  return out;
}

Arrays FusedReduce::vjp(const Arrays& primals, const Arrays& cotangents, const std::vector<int>& argnums,
                  const Arrays&) const {
  return compiler::expanded_vjp([this](const Arrays& in) { return expand(in); }, primals, cotangents, argnums);
}

Arrays FusedReduce::jvp(const Arrays& primals, const Arrays& tangents, const std::vector<int>& argnums) const {
  return compiler::expanded_jvp([this](const Arrays& in) { return expand(in); }, primals, tangents, argnums);
}

std::pair<Arrays, std::vector<int>> FusedReduce::vmap(const Arrays& inputs, const std::vector<int>& axes) const {
  return compiler::expanded_vmap([this](const Arrays& in) { return expand(in); }, inputs, axes);
}

}  // namespace nuvec
