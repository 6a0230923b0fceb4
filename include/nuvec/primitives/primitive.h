// The one Primitive interface (DESIGN.md section 4). Every operation that
// produces values is a primitive; its shape-and-dtype rule is the only place
// that validates arguments.
#pragma once

#include <cstddef>
#include <memory>
#include <ostream>
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

class Primitive {
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
  bool is_equivalent(const Primitive& other) const {
    return id() == other.id() && params_equal(other);
  }
};

/// Helper base: implements id() from the class's registry entry.
template <PrimitiveId Id>
class PrimitiveBase : public Primitive {
 public:
  static constexpr PrimitiveId static_id = Id;
  PrimitiveId id() const override { return Id; }
};

std::ostream& operator<<(std::ostream& os, const Primitive& p);

}  // namespace nuvec
