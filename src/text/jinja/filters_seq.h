// Filters over sequences and mappings (first, last, join, map, select,
// selectattr, sort, unique, min, max, sum, items, dictsort, list, reverse),
// split from filters.cpp. Internal: the registry in filters.cpp is their only
// caller; each has the signature of a registered filter.
#pragma once

#include "text/jinja/value.h"

namespace lineage::jinja::filters {

Value FDictsort(Interpreter& in, const Value& v, CallArgs& a);
Value FFirst(Interpreter& in, const Value& v, CallArgs& a);
Value FLast(Interpreter& in, const Value& v, CallArgs& a);
Value FItems(Interpreter& in, const Value& v, CallArgs& a);
Value FJoin(Interpreter& in, const Value& v, CallArgs& a);
Value FList(Interpreter& in, const Value& v, CallArgs& a);
Value FMap(Interpreter& in, const Value& v, CallArgs& a);
Value FSelect(Interpreter& in, const Value& v, CallArgs& a);
Value FReject(Interpreter& in, const Value& v, CallArgs& a);
Value FSelectAttr(Interpreter& in, const Value& v, CallArgs& a);
Value FRejectAttr(Interpreter& in, const Value& v, CallArgs& a);
Value FMax(Interpreter& in, const Value& v, CallArgs& a);
Value FMin(Interpreter& in, const Value& v, CallArgs& a);
Value FReverse(Interpreter& in, const Value& v, CallArgs& a);
Value FSort(Interpreter& in, const Value& v, CallArgs& a);
Value FSum(Interpreter& in, const Value& v, CallArgs& a);
Value FUnique(Interpreter& in, const Value& v, CallArgs& a);

}  // namespace lineage::jinja::filters
