#include "library/collectives/reduction.hpp"

#include <algorithm>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <stdexcept>
#include <type_traits>

namespace vrdmasim::coll {

namespace {
const char* const kOps[] = {"sum",  "prod", "min", "max",  "land",   "lor",
                            "lxor", "band", "bor", "bxor", "minloc", "maxloc"};
const char* const kTypes[] = {"uint64", "int8",   "int16", "int32", "int64",     "uint8",      "uint16",   "uint32",
                              "float",  "double", "byte",  "2int",  "float-int", "double-int", "long-int", "short-int"};

// The C structs of MPI's pair types (MPI 4.1 section 6.9.4).
template <class V>
struct Pair {
    V value;
    std::int32_t index;
};

template <class T>
T load(const unsigned char* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
template <class T>
void store(unsigned char* p, T v) {
    std::memcpy(p, &v, sizeof v);
}

// a op b for a basic type (integers wrap as two's complement, as the C
// implementations of MPI's sum and prod do on the machines it runs on).
template <class T>
T combine(ReduceOp op, T a, T b) {
    if constexpr (std::is_integral_v<T>) {
        using U = std::make_unsigned_t<T>;
        switch (op) {
        case ReduceOp::Sum: return static_cast<T>(static_cast<U>(std::uint64_t(U(a)) + std::uint64_t(U(b))));
        case ReduceOp::Prod: return static_cast<T>(static_cast<U>(std::uint64_t(U(a)) * std::uint64_t(U(b))));
        case ReduceOp::Land: return static_cast<T>(a != 0 && b != 0);
        case ReduceOp::Lor: return static_cast<T>(a != 0 || b != 0);
        case ReduceOp::Lxor: return static_cast<T>((a != 0) != (b != 0));
        case ReduceOp::Band: return static_cast<T>(a & b);
        case ReduceOp::Bor: return static_cast<T>(a | b);
        case ReduceOp::Bxor: return static_cast<T>(a ^ b);
        default: break;
        }
    } else {
        if (op == ReduceOp::Sum) return a + b;
        if (op == ReduceOp::Prod) return a * b;
    }
    if (op == ReduceOp::Min) return std::min(a, b);
    if (op == ReduceOp::Max) return std::max(a, b);
    throw std::logic_error(std::string("coll::Reduction: ") + name_of(op) + " on a type it is not defined on");
}

template <class T>
void apply_basic(ReduceOp op, unsigned char* inout, const unsigned char* in, std::uint64_t count) {
    for (std::uint64_t i = 0; i < count; ++i, inout += sizeof(T), in += sizeof(T))
        store(inout, combine(op, load<T>(in), load<T>(inout)));
}

// MINLOC and MAXLOC (MPI 4.1 section 6.9.4): the smaller (larger) value
// and its index, the smaller index of equal values.
template <class V>
void apply_pair(ReduceOp op, unsigned char* inout, const unsigned char* in, std::uint64_t count) {
    using P = Pair<V>;
    constexpr std::size_t at = offsetof(P, index);
    for (std::uint64_t i = 0; i < count; ++i, inout += sizeof(P), in += sizeof(P)) {
        const V u = load<V>(in), v = load<V>(inout);
        const std::int32_t j = load<std::int32_t>(in + at), k = load<std::int32_t>(inout + at);
        const bool take = op == ReduceOp::Minloc ? u < v : u > v;
        if (take) store(inout, u);
        if (take || (u == v && j < k)) store(inout + at, j);
    }
}

bool integer(Datatype t) { return t <= Datatype::Uint32; }
bool floating(Datatype t) { return t == Datatype::Float || t == Datatype::Double; }
}   // namespace

const char* name_of(ReduceOp op) { return kOps[static_cast<int>(op)]; }
const char* name_of(Datatype t) { return kTypes[static_cast<int>(t)]; }
std::vector<std::string> reduce_op_names() { return {std::begin(kOps), std::end(kOps)}; }
std::vector<std::string> datatype_names() { return {std::begin(kTypes), std::end(kTypes)}; }

ReduceOp reduce_op_of(const std::string& name) {
    for (std::size_t i = 0; i < std::size(kOps); ++i)
        if (name == kOps[i]) return static_cast<ReduceOp>(i);
    throw std::invalid_argument("unknown reduction operation '" + name + "'");
}
Datatype datatype_of(const std::string& name) {
    for (std::size_t i = 0; i < std::size(kTypes); ++i)
        if (name == kTypes[i]) return static_cast<Datatype>(i);
    throw std::invalid_argument("unknown datatype '" + name + "'");
}

bool is_pair(Datatype t) { return t >= Datatype::TwoInt; }

Datatype value_type(Datatype pair) {
    switch (pair) {
    case Datatype::TwoInt: return Datatype::Int32;
    case Datatype::FloatInt: return Datatype::Float;
    case Datatype::DoubleInt: return Datatype::Double;
    case Datatype::LongInt: return Datatype::Int64;
    case Datatype::ShortInt: return Datatype::Int16;
    default: return pair;
    }
}

std::uint64_t index_offset(Datatype pair) {
    switch (pair) {
    case Datatype::TwoInt: return offsetof(Pair<std::int32_t>, index);
    case Datatype::FloatInt: return offsetof(Pair<float>, index);
    case Datatype::DoubleInt: return offsetof(Pair<double>, index);
    case Datatype::LongInt: return offsetof(Pair<std::int64_t>, index);
    case Datatype::ShortInt: return offsetof(Pair<std::int16_t>, index);
    default: return 0;
    }
}

std::uint64_t size_of(Datatype t) {
    switch (t) {
    case Datatype::Int8:
    case Datatype::Uint8:
    case Datatype::Byte: return 1;
    case Datatype::Int16:
    case Datatype::Uint16: return 2;
    case Datatype::Int32:
    case Datatype::Uint32:
    case Datatype::Float: return 4;
    case Datatype::TwoInt: return sizeof(Pair<std::int32_t>);
    case Datatype::FloatInt: return sizeof(Pair<float>);
    case Datatype::DoubleInt: return sizeof(Pair<double>);
    case Datatype::LongInt: return sizeof(Pair<std::int64_t>);
    case Datatype::ShortInt: return sizeof(Pair<std::int16_t>);
    default: return 8;   // uint64, int64, double
    }
}

bool Reduction::valid(std::string& why) const {
    bool ok = false;
    const char* on = "";
    switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Prod:
    case ReduceOp::Min:
    case ReduceOp::Max:
        ok = integer(type) || floating(type);
        on = "integers and floating point";
        break;
    case ReduceOp::Land:
    case ReduceOp::Lor:
    case ReduceOp::Lxor:
        ok = integer(type);
        on = "integers (and logicals)";
        break;
    case ReduceOp::Band:
    case ReduceOp::Bor:
    case ReduceOp::Bxor:
        ok = integer(type) || type == Datatype::Byte;
        on = "integers and bytes";
        break;
    case ReduceOp::Minloc:
    case ReduceOp::Maxloc:
        ok = is_pair(type);
        on = "the pair types (2int, float-int, double-int, long-int, short-int)";
        break;
    }
    if (!ok)
        why = std::string("MPI defines ") + name_of(op) + " on " + on + ", not on " + name_of(type) +
              " (MPI 4.1 section 6.9.2)";
    return ok;
}

void Reduction::apply(unsigned char* inout, const unsigned char* in, std::uint64_t count) const {
    switch (type) {
    case Datatype::Uint64: return apply_basic<std::uint64_t>(op, inout, in, count);
    case Datatype::Int8: return apply_basic<std::int8_t>(op, inout, in, count);
    case Datatype::Int16: return apply_basic<std::int16_t>(op, inout, in, count);
    case Datatype::Int32: return apply_basic<std::int32_t>(op, inout, in, count);
    case Datatype::Int64: return apply_basic<std::int64_t>(op, inout, in, count);
    case Datatype::Uint8:
    case Datatype::Byte: return apply_basic<std::uint8_t>(op, inout, in, count);
    case Datatype::Uint16: return apply_basic<std::uint16_t>(op, inout, in, count);
    case Datatype::Uint32: return apply_basic<std::uint32_t>(op, inout, in, count);
    case Datatype::Float: return apply_basic<float>(op, inout, in, count);
    case Datatype::Double: return apply_basic<double>(op, inout, in, count);
    case Datatype::TwoInt: return apply_pair<std::int32_t>(op, inout, in, count);
    case Datatype::FloatInt: return apply_pair<float>(op, inout, in, count);
    case Datatype::DoubleInt: return apply_pair<double>(op, inout, in, count);
    case Datatype::LongInt: return apply_pair<std::int64_t>(op, inout, in, count);
    case Datatype::ShortInt: return apply_pair<std::int16_t>(op, inout, in, count);
    }
}

}   // namespace vrdmasim::coll
