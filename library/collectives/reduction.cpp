#include "library/collectives/reduction.hpp"

#include <algorithm>
#include <complex>
#include <cstddef>
#include <cstring>
#include <iterator>
#include <limits>
#include <stdexcept>
#include <type_traits>

namespace vrdmasim::coll {

namespace {
const char* const kOps[] = {"sum",  "prod", "min", "max",  "land",   "lor",
                            "lxor", "band", "bor", "bxor", "minloc", "maxloc"};
const char* const kTypes[] = {"uint64",          "int8",           "int16",
                              "int32",           "int64",          "uint8",
                              "uint16",          "uint32",         "float",
                              "double",          "byte",           "2int",
                              "float-int",       "double-int",     "long-int",
                              "short-int",       "long-double",    "bool",
                              "float-complex",   "double-complex", "long-double-complex",
                              "long-double-int", "2real",          "2double-precision"};

// The C structs of MPI's pair types (MPI 4.1 section 6.9.4): an int index,
// or (Fortran's MPI_2REAL, MPI_2DOUBLE_PRECISION) one of the value's type.
template <class V, class I = std::int32_t>
struct Pair {
    V value;
    I index;
};
using TwoReal = Pair<float, float>;
using TwoDoublePrecision = Pair<double, double>;

// A long double's bytes that hold its value: x86-64's 80-bit extended
// format takes 10 of its 16; elsewhere all.
constexpr std::size_t kLongDoubleBytes = std::numeric_limits<long double>::digits == 64 ? 10 : sizeof(long double);

template <class T>
T load(const unsigned char* p) {
    T v;
    std::memcpy(&v, p, sizeof v);
    return v;
}
// (A long double's padding is never written: a compiler's store leaves it.)
template <class T>
void store(unsigned char* p, T v) {
    if constexpr (std::is_same_v<T, long double>) {
        std::memcpy(p, &v, kLongDoubleBytes);
    } else if constexpr (std::is_same_v<T, std::complex<long double>>) {
        store(p, v.real());
        store(p + sizeof(long double), v.imag());
    } else {
        std::memcpy(p, &v, sizeof v);
    }
}

template <class T>
struct IsComplex : std::false_type {};
template <class T>
struct IsComplex<std::complex<T>> : std::true_type {};

// a op b for a basic type (integers wrap as two's complement, as the C
// implementations of MPI's sum and prod do on the machines it runs on;
// complex numbers take sum and prod alone).
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
    if constexpr (!IsComplex<T>::value) {
        if (op == ReduceOp::Min) return std::min(a, b);
        if (op == ReduceOp::Max) return std::max(a, b);
    }
    throw std::logic_error(std::string("coll::Reduction: ") + name_of(op) + " on a type it is not defined on");
}

template <class T>
void apply_basic(ReduceOp op, unsigned char* inout, const unsigned char* in, std::uint64_t count) {
    for (std::uint64_t i = 0; i < count; ++i, inout += sizeof(T), in += sizeof(T))
        store(inout, combine(op, load<T>(in), load<T>(inout)));
}

// MINLOC and MAXLOC (MPI 4.1 section 6.9.4): the smaller (larger) value
// and its index, the smaller index of equal values.
template <class V, class I = std::int32_t>
void apply_pair(ReduceOp op, unsigned char* inout, const unsigned char* in, std::uint64_t count) {
    using P = Pair<V, I>;
    constexpr std::size_t at = offsetof(P, index);
    for (std::uint64_t i = 0; i < count; ++i, inout += sizeof(P), in += sizeof(P)) {
        const V u = load<V>(in), v = load<V>(inout);
        const I j = load<I>(in + at), k = load<I>(inout + at);
        const bool take = op == ReduceOp::Minloc ? u < v : u > v;
        if (take) store(inout, u);
        if (take || (u == v && j < k)) store(inout + at, j);
    }
}

bool integer(Datatype t) { return t <= Datatype::Uint32; }
bool floating(Datatype t) { return t == Datatype::Float || t == Datatype::Double || t == Datatype::LongDouble; }
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

bool is_pair(Datatype t) {
    switch (t) {
    case Datatype::TwoInt:
    case Datatype::FloatInt:
    case Datatype::DoubleInt:
    case Datatype::LongInt:
    case Datatype::ShortInt:
    case Datatype::LongDoubleInt:
    case Datatype::TwoReal:
    case Datatype::TwoDoublePrecision: return true;
    default: return false;
    }
}

bool is_complex(Datatype t) {
    return t == Datatype::FloatComplex || t == Datatype::DoubleComplex || t == Datatype::LongDoubleComplex;
}

Datatype part_type(Datatype complex) {
    switch (complex) {
    case Datatype::FloatComplex: return Datatype::Float;
    case Datatype::DoubleComplex: return Datatype::Double;
    case Datatype::LongDoubleComplex: return Datatype::LongDouble;
    default: return complex;
    }
}

Datatype index_type(Datatype pair) {
    return pair == Datatype::TwoReal || pair == Datatype::TwoDoublePrecision ? value_type(pair) : Datatype::Int32;
}

std::uint64_t significant_bytes(Datatype t) { return t == Datatype::LongDouble ? kLongDoubleBytes : size_of(t); }

Datatype value_type(Datatype pair) {
    switch (pair) {
    case Datatype::TwoInt: return Datatype::Int32;
    case Datatype::FloatInt: return Datatype::Float;
    case Datatype::DoubleInt: return Datatype::Double;
    case Datatype::LongInt: return Datatype::Int64;
    case Datatype::ShortInt: return Datatype::Int16;
    case Datatype::LongDoubleInt: return Datatype::LongDouble;
    case Datatype::TwoReal: return Datatype::Float;
    case Datatype::TwoDoublePrecision: return Datatype::Double;
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
    case Datatype::LongDoubleInt: return offsetof(Pair<long double>, index);
    case Datatype::TwoReal: return offsetof(TwoReal, index);
    case Datatype::TwoDoublePrecision: return offsetof(TwoDoublePrecision, index);
    default: return 0;
    }
}

std::uint64_t size_of(Datatype t) {
    switch (t) {
    case Datatype::Int8:
    case Datatype::Uint8:
    case Datatype::Byte:
    case Datatype::Bool: return 1;
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
    case Datatype::LongDouble: return sizeof(long double);
    case Datatype::FloatComplex: return sizeof(std::complex<float>);
    case Datatype::DoubleComplex: return sizeof(std::complex<double>);
    case Datatype::LongDoubleComplex: return sizeof(std::complex<long double>);
    case Datatype::LongDoubleInt: return sizeof(Pair<long double>);
    case Datatype::TwoReal: return sizeof(Pair<float, float>);
    case Datatype::TwoDoublePrecision: return sizeof(Pair<double, double>);
    default: return 8;   // uint64, int64, double
    }
}

bool Reduction::valid(std::string& why) const {
    bool ok = false;
    const char* on = "";
    switch (op) {
    case ReduceOp::Sum:
    case ReduceOp::Prod:
        ok = integer(type) || floating(type) || is_complex(type);
        on = "integers, floating point and complex";
        break;
    case ReduceOp::Min:
    case ReduceOp::Max:
        ok = integer(type) || floating(type);
        on = "integers and floating point";
        break;
    case ReduceOp::Land:
    case ReduceOp::Lor:
    case ReduceOp::Lxor:
        ok = integer(type) || type == Datatype::Bool;
        on = "integers and logicals (bool)";
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
        on = "the pair types (2int, float-int, double-int, long-int, short-int, long-double-int, 2real, "
             "2double-precision)";
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
    case Datatype::Byte:
    case Datatype::Bool: return apply_basic<std::uint8_t>(op, inout, in, count);
    case Datatype::Uint16: return apply_basic<std::uint16_t>(op, inout, in, count);
    case Datatype::Uint32: return apply_basic<std::uint32_t>(op, inout, in, count);
    case Datatype::Float: return apply_basic<float>(op, inout, in, count);
    case Datatype::Double: return apply_basic<double>(op, inout, in, count);
    case Datatype::TwoInt: return apply_pair<std::int32_t>(op, inout, in, count);
    case Datatype::FloatInt: return apply_pair<float>(op, inout, in, count);
    case Datatype::DoubleInt: return apply_pair<double>(op, inout, in, count);
    case Datatype::LongInt: return apply_pair<std::int64_t>(op, inout, in, count);
    case Datatype::ShortInt: return apply_pair<std::int16_t>(op, inout, in, count);
    case Datatype::LongDouble: return apply_basic<long double>(op, inout, in, count);
    case Datatype::FloatComplex: return apply_basic<std::complex<float>>(op, inout, in, count);
    case Datatype::DoubleComplex: return apply_basic<std::complex<double>>(op, inout, in, count);
    case Datatype::LongDoubleComplex: return apply_basic<std::complex<long double>>(op, inout, in, count);
    case Datatype::LongDoubleInt: return apply_pair<long double>(op, inout, in, count);
    case Datatype::TwoReal: return apply_pair<float, float>(op, inout, in, count);
    case Datatype::TwoDoublePrecision: return apply_pair<double, double>(op, inout, in, count);
    }
}

}   // namespace vrdmasim::coll
