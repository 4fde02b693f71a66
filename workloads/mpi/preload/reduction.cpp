// A reduction's MPI_Op and datatype as the collectives library's
// (library/collectives/reduction.hpp; workloads/mpi/README.md "What is
// timed"): Open MPI's predefined operations, and its basic datatypes, pair
// types and complex types the library has, each checked against the C
// type's size on this machine (MPI_LONG is the library's int64 on LP64
// alone). A derived datatype is not one MPI's predefined operations take.
#include <mpi.h>

#include <complex>
#include <string>
#include <utility>

#include "library/collectives/reduction.hpp"
#include "workloads/mpi/preload/calls.hpp"
#include "workloads/mpi/preload/channel.hpp"

using namespace vrdmasim;

namespace {

using coll::Datatype;
using coll::ReduceOp;

// (Open MPI's MPI_Op and MPI_Datatype are addresses of its globals, not
// constants: the tables are made at the call.)
bool op_of(MPI_Op op, ReduceOp& out) {
    const std::pair<MPI_Op, ReduceOp> ops[] = {
        {MPI_SUM, ReduceOp::Sum},   {MPI_PROD, ReduceOp::Prod},     {MPI_MIN, ReduceOp::Min},
        {MPI_MAX, ReduceOp::Max},   {MPI_LAND, ReduceOp::Land},     {MPI_LOR, ReduceOp::Lor},
        {MPI_LXOR, ReduceOp::Lxor}, {MPI_BAND, ReduceOp::Band},     {MPI_BOR, ReduceOp::Bor},
        {MPI_BXOR, ReduceOp::Bxor}, {MPI_MINLOC, ReduceOp::Minloc}, {MPI_MAXLOC, ReduceOp::Maxloc}};
    for (const auto& [mpi, ours] : ops)
        if (op == mpi) {
            out = ours;
            return true;
        }
    return false;
}

// Each type with its C type's size: a type whose size here is not the
// library's (MPI_LONG on an ILP32 machine) is not matched.
template <class C>
std::pair<MPI_Datatype, Datatype> as(MPI_Datatype mpi, Datatype ours) {
    return {coll::size_of(ours) == sizeof(C) ? mpi : MPI_DATATYPE_NULL, ours};
}

bool type_of(MPI_Datatype type, Datatype& out) {
    struct LongInt {
        long value;
        int index;
    };
    const std::pair<MPI_Datatype, Datatype> types[] = {
        as<std::int8_t>(MPI_INT8_T, Datatype::Int8),
        as<signed char>(MPI_SIGNED_CHAR, Datatype::Int8),
        as<std::int16_t>(MPI_INT16_T, Datatype::Int16),
        as<short>(MPI_SHORT, Datatype::Int16),
        as<std::int32_t>(MPI_INT32_T, Datatype::Int32),
        as<int>(MPI_INT, Datatype::Int32),
        as<std::int64_t>(MPI_INT64_T, Datatype::Int64),
        as<long>(MPI_LONG, Datatype::Int64),
        as<long long>(MPI_LONG_LONG, Datatype::Int64),
        as<std::uint8_t>(MPI_UINT8_T, Datatype::Uint8),
        as<unsigned char>(MPI_UNSIGNED_CHAR, Datatype::Uint8),
        as<std::uint16_t>(MPI_UINT16_T, Datatype::Uint16),
        as<unsigned short>(MPI_UNSIGNED_SHORT, Datatype::Uint16),
        as<std::uint32_t>(MPI_UINT32_T, Datatype::Uint32),
        as<unsigned>(MPI_UNSIGNED, Datatype::Uint32),
        as<std::uint64_t>(MPI_UINT64_T, Datatype::Uint64),
        as<unsigned long>(MPI_UNSIGNED_LONG, Datatype::Uint64),
        as<unsigned long long>(MPI_UNSIGNED_LONG_LONG, Datatype::Uint64),
        as<float>(MPI_FLOAT, Datatype::Float),
        as<double>(MPI_DOUBLE, Datatype::Double),
        as<unsigned char>(MPI_BYTE, Datatype::Byte),
        {MPI_2INT, Datatype::TwoInt},
        {MPI_FLOAT_INT, Datatype::FloatInt},
        {MPI_DOUBLE_INT, Datatype::DoubleInt},
        as<LongInt>(MPI_LONG_INT, Datatype::LongInt),
        {MPI_SHORT_INT, Datatype::ShortInt},
        // Fortran's (gfortran's kinds: INTEGER and LOGICAL
        // 4 B, .TRUE. 1; REAL 4 B; DOUBLE PRECISION 8 B),
        // as its bindings pass them on; each checked
        // against its extent below.
        as<std::int32_t>(MPI_INTEGER, Datatype::Int32),
        as<std::int32_t>(MPI_LOGICAL, Datatype::Int32),
        as<std::int8_t>(MPI_INTEGER1, Datatype::Int8),
        as<std::int16_t>(MPI_INTEGER2, Datatype::Int16),
        as<std::int32_t>(MPI_INTEGER4, Datatype::Int32),
        as<std::int64_t>(MPI_INTEGER8, Datatype::Int64),
        as<float>(MPI_REAL, Datatype::Float),
        as<float>(MPI_REAL4, Datatype::Float),
        as<double>(MPI_DOUBLE_PRECISION, Datatype::Double),
        as<double>(MPI_REAL8, Datatype::Double),
        {MPI_2INTEGER, Datatype::TwoInt},
        // (x86-64's long double: 80 bits in 16 B)
        as<long double>(MPI_LONG_DOUBLE, Datatype::LongDouble),
        {MPI_LONG_DOUBLE_INT, Datatype::LongDoubleInt},
        as<bool>(MPI_C_BOOL, Datatype::Bool),
        as<bool>(MPI_CXX_BOOL, Datatype::Bool),
        as<std::int64_t>(MPI_AINT, Datatype::Int64),
        as<std::int64_t>(MPI_OFFSET, Datatype::Int64),
        as<std::int64_t>(MPI_COUNT, Datatype::Int64),
        as<std::complex<float>>(MPI_C_FLOAT_COMPLEX, Datatype::FloatComplex),
        as<std::complex<double>>(MPI_C_DOUBLE_COMPLEX, Datatype::DoubleComplex),
        as<std::complex<long double>>(MPI_C_LONG_DOUBLE_COMPLEX, Datatype::LongDoubleComplex),
        as<std::complex<float>>(MPI_CXX_FLOAT_COMPLEX, Datatype::FloatComplex),
        as<std::complex<double>>(MPI_CXX_DOUBLE_COMPLEX, Datatype::DoubleComplex),
        as<std::complex<long double>>(MPI_CXX_LONG_DOUBLE_COMPLEX, Datatype::LongDoubleComplex),
        // Fortran's: LOGICAL*k as INTEGER*k (.TRUE. 1),
        // COMPLEX as two REALs, 2REAL's index a REAL.
        as<std::int8_t>(MPI_LOGICAL1, Datatype::Int8),
        as<std::int16_t>(MPI_LOGICAL2, Datatype::Int16),
        as<std::int32_t>(MPI_LOGICAL4, Datatype::Int32),
        as<std::int64_t>(MPI_LOGICAL8, Datatype::Int64),
        as<std::complex<float>>(MPI_COMPLEX, Datatype::FloatComplex),
        as<std::complex<float>>(MPI_COMPLEX8, Datatype::FloatComplex),
        as<std::complex<double>>(MPI_DOUBLE_COMPLEX, Datatype::DoubleComplex),
        as<std::complex<double>>(MPI_COMPLEX16, Datatype::DoubleComplex),
        {MPI_2REAL, Datatype::TwoReal},
        {MPI_2DOUBLE_PRECISION, Datatype::TwoDoublePrecision}};
    for (const auto& [mpi, ours] : types)
        if (type == mpi && mpi != MPI_DATATYPE_NULL) {
            out = ours;
            return true;
        }
    return false;
}

// Whether `type` is a derived datatype (not one of MPI's named ones).
bool derived(MPI_Datatype type) {
    int ni = 0, na = 0, nd = 0, combiner = 0;
    PMPI_Type_get_envelope(type, &ni, &na, &nd, &combiner);
    return combiner != MPI_COMBINER_NAMED;
}

}   // namespace

bool vrdmasim::mpipreload::reduction(mpiwire::Call& c, const char* name, MPI_Op op, MPI_Datatype type,
                                     std::uint64_t count, const void* buf) {
    coll::Reduction red;
    MPI_Aint lb = 0, extent = 0;
    PMPI_Type_get_extent(type, &lb, &extent);
    if (!op_of(op, red.op)) {   // the program's own: bxor on its bytes stands in (protocol.hpp kStandIn)
        if (lb != 0 || extent <= 0) {
            untimed((std::string(name) + " of a user-defined MPI_Op on a datatype with gaps").c_str());
            return false;
        }
        c.reduce_op = static_cast<std::uint32_t>(ReduceOp::Bxor) | mpiwire::kStandIn;
        c.datatype = static_cast<std::uint32_t>(Datatype::Byte);
        c.elements = c.bytes = count * static_cast<std::uint64_t>(extent);
        c.va = reinterpret_cast<std::uint64_t>(buf);
        return true;
    }
    // MPI's predefined operations take its predefined datatypes alone (MPI
    // 4.1 section 6.9.2): real MPI reports it (Open MPI 4.1: MPI_ERR_OP).
    if (derived(type)) {
        untimed((std::string(name) + " of a derived datatype").c_str());
        return false;
    }
    if (!type_of(type, red.type) || lb != 0 || static_cast<std::uint64_t>(extent) != red.element_bytes()) {
        untimed((std::string(name) + " of a datatype the library has not").c_str());
        return false;
    }
    std::string why;
    if (!red.valid(why)) {   // (real MPI reports it)
        untimed((std::string(name) + ": " + coll::name_of(red.op) + " not on " + coll::name_of(red.type)).c_str());
        return false;
    }
    c.reduce_op = static_cast<std::uint32_t>(red.op);
    c.datatype = static_cast<std::uint32_t>(red.type);
    c.elements = count;
    c.va = reinterpret_cast<std::uint64_t>(buf);
    c.bytes = count * red.element_bytes();
    return true;
}
