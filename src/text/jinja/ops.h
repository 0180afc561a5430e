// Python operators on template values: equality, ordering, membership,
// arithmetic, len(), iteration, indexing and slicing. Each throws a
// RenderError where Python raises (TypeError, ZeroDivisionError) or where
// Jinja's Undefined refuses an operation (UndefinedError). Integers are
// 64-bit: where Python would give a bigger int, a kLimit error; sizes of
// results are checked against the render's memory budget before they are
// built (render_memory.h).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <vector>

#include "text/jinja/value.h"

namespace lineage::jinja {

// Raises jinja2's UndefinedError for an operation on an Undefined.
[[noreturn]] void FailUndefined(const Value& undefined);

// int(f) for a finite float: truncated toward zero; a kLimit error when the
// result does not fit in 64 bits (a C++ cast would be undefined there).
int64_t TruncToInt(double f);

bool PyEquals(const Value& a, const Value& b);
// -1, 0, 1; TypeError when Python cannot order the two.
int PyCompare(const Value& a, const Value& b);
bool PyContains(const Value& container, const Value& item);
// op: + - * / // % ** ~
Value BinaryOp(const std::string& op, const Value& a, const Value& b);
Value Negate(const Value& v, bool minus);
int64_t PyLen(const Value& v);
// The items a Python for loop sees: list items, dict keys, string code points.
std::vector<Value> PyIterate(const Value& v);
// obj[index] for lists and strings; Undefined when out of range.
Value PyIndex(const Value& obj, int64_t index);
Value PySlice(const Value& obj, std::optional<int64_t> start, std::optional<int64_t> stop,
              std::optional<int64_t> step);

}  // namespace lineage::jinja
