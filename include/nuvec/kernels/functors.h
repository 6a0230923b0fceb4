// All scalar functors: the header the backends and the code generators include.
#pragma once

#include "binary.h"
#include "cast.h"
#include "fastdiv.h"
#include "gpu_rows.h"
#include "pairs.h"
#include "stream.h"
#include "unary.h"
