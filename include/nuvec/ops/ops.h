// All operations.
#pragma once

#include "nuvec/ops/conv.h"
#include "nuvec/ops/creation.h"
#include "nuvec/ops/elementwise.h"
#include "nuvec/ops/indexing.h"
#include "nuvec/ops/join.h"
#include "nuvec/ops/linalg.h"
#include "nuvec/ops/misc.h"
#include "nuvec/ops/quantized.h"
#include "nuvec/ops/reduce.h"
#include "nuvec/ops/shape.h"
#include "nuvec/ops/sort.h"
