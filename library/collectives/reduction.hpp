// coll::Reduction: what a reduction computes (README.md "Reductions"): one
// of MPI's predefined operations (MPI 4.1 section 6.9.2) on elements of
// one of MPI's basic datatypes or of its pair types for MINLOC and MAXLOC
// (MPI_2INT, MPI_FLOAT_INT, ...: a C struct {value; int index}, at the
// struct's size with its padding; Fortran's MPI_2REAL and
// MPI_2DOUBLE_PRECISION, whose index is a value of the value's type), or
// of its complex types for sum and prod. Every predefined operation is
// commutative and associative (MPI 4.1 section 6.9.2; floating-point
// rounding aside), so the algorithms combine in any order, as MPICH's for
// commutative operations do. MPI_REPLACE and MPI_NO_OP are accumulate's
// alone (section 12.3.4): no collective takes them, and the MPI workload's
// accumulates are network atomics (workloads/mpi/one_sided.cpp).
#pragma once

#include <cstdint>
#include <string>
#include <vector>

namespace vrdmasim::coll {

enum class ReduceOp { Sum, Prod, Min, Max, Land, Lor, Lxor, Band, Bor, Bxor, Minloc, Maxloc };
enum class Datatype {
    Uint64,
    Int8,
    Int16,
    Int32,
    Int64,
    Uint8,
    Uint16,
    Uint32,
    Float,
    Double,
    Byte,   // MPI_BYTE: the bitwise operations' alone
    TwoInt,   // MPI_2INT: {int; int}
    FloatInt,   // MPI_FLOAT_INT: {float; int}
    DoubleInt,   // MPI_DOUBLE_INT: {double; int}, 16 B
    LongInt,   // MPI_LONG_INT: {long; int}, 16 B (LP64)
    ShortInt,   // MPI_SHORT_INT: {short; int}, 8 B
    LongDouble,   // MPI_LONG_DOUBLE: x86-64's 80-bit extended, in 16 B
    Bool,   // MPI_C_BOOL, MPI_CXX_BOOL: 1 B, 0 or 1; the logical operations' alone
    FloatComplex,   // MPI_C_FLOAT_COMPLEX, Fortran's MPI_COMPLEX: {float re; float im}
    DoubleComplex,   // MPI_C_DOUBLE_COMPLEX, MPI_DOUBLE_COMPLEX: {double; double}
    LongDoubleComplex,   // MPI_C_LONG_DOUBLE_COMPLEX: {long double; long double}, 32 B
    LongDoubleInt,   // MPI_LONG_DOUBLE_INT: {long double; int}, 32 B
    TwoReal,   // Fortran's MPI_2REAL: {REAL value; REAL index}
    TwoDoublePrecision   // Fortran's MPI_2DOUBLE_PRECISION: {DOUBLE PRECISION; DOUBLE PRECISION}
};

// The names the parameters and messages use (sum, max, ...; uint64, int32,
// double, double-int, ...), every one of each in order.
const char* name_of(ReduceOp op);
const char* name_of(Datatype t);
std::vector<std::string> reduce_op_names();
std::vector<std::string> datatype_names();
ReduceOp reduce_op_of(const std::string& name);
Datatype datatype_of(const std::string& name);

// The bytes an element takes in a buffer (a pair type's C struct, padding
// included: its extent in MPI's terms).
std::uint64_t size_of(Datatype t);
// Whether `t` is a pair type (MINLOC's and MAXLOC's); a pair type's
// value's type (int32 for 2int, ...), its index's offset in the struct and
// its index's type (int32; Fortran's 2real and 2double-precision: their
// value's, MPI 4.1 section 6.9.4).
bool is_pair(Datatype t);
Datatype value_type(Datatype pair);
std::uint64_t index_offset(Datatype pair);
Datatype index_type(Datatype pair);
// Whether `t` is a complex type (sum and prod alone), and its parts' type.
bool is_complex(Datatype t);
Datatype part_type(Datatype complex);
// The bytes of an element that hold its value (long double's 10 of its 16;
// a pair's or a complex's own size): the rest is padding, never written.
std::uint64_t significant_bytes(Datatype t);

struct Reduction {
    ReduceOp op = ReduceOp::Sum;
    Datatype type = Datatype::Uint64;
    std::uint64_t element_bytes() const { return size_of(type); }
    // Whether MPI defines `op` on `type` (MPI 4.1 section 6.9.2: sum and
    // prod on integers, floating point and complex; min and max on
    // integers and floating point; the logical ones on integers and
    // booleans; the bitwise ones on integers and bytes; minloc and maxloc
    // on the pair types alone); if not, `why` says so.
    bool valid(std::string& why) const;
    // inout[i] = in[i] op inout[i] for `count` elements of `type` (a pair
    // type's and a long double's padding left as inout's). The caller has
    // checked valid().
    void apply(unsigned char* inout, const unsigned char* in, std::uint64_t count) const;
};

}   // namespace vrdmasim::coll
