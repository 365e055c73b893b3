// The extension module birkhoff._birkhoff: one register_* function per domain.
#include <nanobind/nanobind.h>

#include "birkhoff/core/error.hpp"
#include "birkhoff/version.hpp"

namespace nb = nanobind;

namespace birkhoff::python {
void register_transport(nb::module_& m);
void register_transport_ops(nb::module_& m);
void register_problems(nb::module_& m);
void register_coarsen(nb::module_& m);
void register_align(nb::module_& m);
}  // namespace birkhoff::python

NB_MODULE(_birkhoff, m) {
  m.doc() = "Native core of birkhoff (see the birkhoff package for the documented API).";
  m.attr("__version__") = birkhoff::kVersion;
  // Solutions referenced from torch autograd graphs that are still alive at interpreter exit
  // are never released by Python's finalisation; that is not a leak of ours to report.
  nb::set_leak_warnings(false);
  // InvalidType -> TypeError, other InvalidInput -> ValueError, Cancelled -> KeyboardInterrupt.
  nb::register_exception_translator([](const std::exception_ptr& p, void*) {
    try {
      std::rethrow_exception(p);
    } catch (const birkhoff::InvalidType& e) {
      PyErr_SetString(PyExc_TypeError, e.what());
    } catch (const birkhoff::InvalidInput& e) {
      PyErr_SetString(PyExc_ValueError, e.what());
    } catch (const birkhoff::Cancelled&) {
      PyErr_SetNone(PyExc_KeyboardInterrupt);
    }
  });
  birkhoff::python::register_transport(m);
  birkhoff::python::register_transport_ops(m);
  birkhoff::python::register_problems(m);
  birkhoff::python::register_coarsen(m);
  birkhoff::python::register_align(m);
}
