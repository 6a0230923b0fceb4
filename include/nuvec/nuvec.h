// nuvec: lazy arrays and composable transforms. The one header to include.
#pragma once

#include "nuvec/compile.h"
#include "nuvec/core/array.h"
#include "nuvec/core/device.h"
#include "nuvec/core/dtype.h"
#include "nuvec/core/error.h"
#include "nuvec/core/eval.h"
#include "nuvec/core/memory.h"
#include "nuvec/core/print.h"
#include "nuvec/core/shape.h"
#include "nuvec/fast.h"
#include "nuvec/io.h"
#include "nuvec/linalg.h"
#include "nuvec/ops/ops.h"
#include "nuvec/random.h"
#include "nuvec/transforms.h"
#include "nuvec/tree.h"
