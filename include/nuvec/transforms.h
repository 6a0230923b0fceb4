// Function transforms: vjp, jvp, grad, value_and_grad, vmap,
// custom_function and checkpoint, over trees and over positional arrays,
// and MLX's C++ forms of each (docs/transforms.md).
#pragma once

#include "nuvec/transforms/custom.h"
#include "nuvec/transforms/flat.h"
#include "nuvec/transforms/mlx.h"
#include "nuvec/transforms/tree.h"
#include "nuvec/transforms/vmap.h"
