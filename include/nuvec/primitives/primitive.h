// The one Primitive interface (DESIGN.md section 4). Every operation that
// produces values is a primitive; its shape-and-dtype rule is the only place
// that validates arguments.
#pragma once

#include <cstddef>
#include <memory>
#include <ostream>
#include <utility>
#include <vector>

#include "nuvec/core/array.h"
#include "nuvec/primitives/registry.h"

namespace nuvec {

/// The shape, dtype and layout of one output. A view shares the buffer of
/// input `view_of` at the given strides and offset (in elements).
struct OutputSpec {
  Shape shape;
  DType dtype;
  bool is_view = false;
  int view_of = 0;
  Strides strides;     // for views only
  int64_t offset = 0;  // for views only
};

/// Arrays and, for vmap, their batch axes (-1: not batched).
using Arrays = std::vector<Array>;

class Primitive : public std::enable_shared_from_this<Primitive> {
 public:
  virtual ~Primitive() = default;
  /// The primitive's entry in the registry.
  virtual PrimitiveId id() const = 0;
  const char* name() const { return primitive_name(id()); }
  /// The shape-and-dtype rule: validates the inputs and parameters and gives
  /// the outputs, or the error (without op name or location; the op builder
  /// adds them).
  virtual Expected<std::vector<OutputSpec>> output_specs(
      const std::vector<Array>& inputs) const = 0;
  /// Parameters compare equal (same id assumed); floats bitwise.
  virtual bool params_equal(const Primitive&) const { return true; }
  virtual size_t params_hash() const { return 0; }
  virtual void print_params(std::ostream&) const {}

  // Transform rules, written with ops (so derivatives of derivatives work);
  // defined beside each family in src/primitives/*_grad.cpp and *_vmap.cpp.
  // A primitive without a rule throws nuvec::Error (transform) naming it.

  /// Reverse mode: the cotangents of the inputs listed in `argnums`, given a
  /// cotangent for every output (zeros where an output had none) and the
  /// outputs (an output nobody kept is a failed placeholder).
  virtual Arrays vjp(const Arrays& primals, const Arrays& cotangents,
                     const std::vector<int>& argnums, const Arrays& outputs) const;
  /// Forward mode: the tangent of every output, given the tangents of the
  /// inputs listed in `argnums` (the others have none: zero).
  virtual Arrays jvp(const Arrays& primals, const Arrays& tangents,
                     const std::vector<int>& argnums) const;
  /// Vectorization: the outputs over the batch and each output's batch
  /// axis, given inputs whose batch axis is `axes[i]` (-1: not batched; at
  /// least one is batched).
  virtual std::pair<Arrays, std::vector<int>> vmap(const Arrays& inputs,
                                                   const std::vector<int>& axes) const;

  /// Whether derivatives flow through input `i` (false for inputs that
  /// lend only their shape, such as a relative broadcast's extra inputs).
  virtual bool differentiable_input(int) const { return true; }

  /// Whether the output shapes follow from the input shapes alone (no
  /// literal size in the parameters): shapeless compile replays only these.
  virtual bool shape_polymorphic() const { return true; }

  bool is_equivalent(const Primitive& other) const {
    return id() == other.id() && params_equal(other);
  }
};

/// Declares a primitive's three transform rules (see Primitive).
#define NUVEC_TRANSFORM_RULES                                                                \
  Arrays vjp(const Arrays& primals, const Arrays& cotangents, const std::vector<int>& argnums, \
             const Arrays& outputs) const override;                                           \
  Arrays jvp(const Arrays& primals, const Arrays& tangents, const std::vector<int>& argnums)   \
      const override;                                                                         \
  std::pair<Arrays, std::vector<int>> vmap(const Arrays& inputs, const std::vector<int>& axes) \
      const override;

/// Helper base: implements id() from the class's registry entry.
template <PrimitiveId Id>
class PrimitiveBase : public Primitive {
 public:
  static constexpr PrimitiveId static_id = Id;
  PrimitiveId id() const override { return Id; }
};

std::ostream& operator<<(std::ostream& os, const Primitive& p);

}  // namespace nuvec
