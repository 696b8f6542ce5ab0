# SPDX-License-Identifier: MIT
# cuxfer_cuda.m4 - find the CUDA runtime (headers and libcudart)
#
# CUXFER_CUDA: --with-cuda[=DIR].  Without a DIR the toolkit is guessed:
# $CUDA_HOME, then /usr/local/cuda; for each, lib64 then lib.  The result is
# CUDA_CPPFLAGS (with -isystem, so -Wall -Wextra -Werror -pedantic builds stay
# clean over CUDA's own headers), CUDA_LDFLAGS (with an rpath, so programs run
# without LD_LIBRARY_PATH), CUDA_LIBS and AM_CONDITIONAL HAVE_CUDA.  A guess
# that fails only disables CUDA; a DIR the user named that fails is an error.
# The same option reaches distcheck through AM_DISTCHECK_CONFIGURE_FLAGS.
AC_DEFUN([CUXFER_CUDA], [
AC_ARG_WITH([cuda],
  [AS_HELP_STRING([--with-cuda@<:@=DIR@:>@],
    [CUDA toolkit root (default: $CUDA_HOME, then /usr/local/cuda); --without-cuda installs only the header, pkg-config file and man pages])],
  [], [with_cuda=check])
have_cuda=no
CUDA_HOME_USED=
CUDA_CPPFLAGS=
CUDA_LDFLAGS=
CUDA_LIBS=
AS_CASE([$with_cuda],
  [no], [cuxfer_cuda_dirs=],
  [yes|check], [cuxfer_cuda_dirs="${CUDA_HOME} /usr/local/cuda"],
  [cuxfer_cuda_dirs=$with_cuda
   AS_IF([test ! -d "$with_cuda"],
     [AC_MSG_ERROR([--with-cuda=$with_cuda: no such directory])])])
for cuxfer_dir in $cuxfer_cuda_dirs; do
  test -d "$cuxfer_dir" || continue
  for cuxfer_libdir in lib64 lib; do
    test -d "$cuxfer_dir/$cuxfer_libdir" || continue
    AC_MSG_CHECKING([for the CUDA runtime in $cuxfer_dir/$cuxfer_libdir])
    cuxfer_save_CPPFLAGS=$CPPFLAGS
    cuxfer_save_LDFLAGS=$LDFLAGS
    cuxfer_save_LIBS=$LIBS
    CPPFLAGS="$CPPFLAGS -isystem $cuxfer_dir/include"
    LDFLAGS="$LDFLAGS -L$cuxfer_dir/$cuxfer_libdir"
    LIBS="-lcudart $LIBS"
    AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <cuda_runtime_api.h>]],
        [[int n = 0; return cudaGetDeviceCount(&n) == cudaSuccess ? 0 : 1;]])],
      [have_cuda=yes], [have_cuda=no])
    CPPFLAGS=$cuxfer_save_CPPFLAGS
    LDFLAGS=$cuxfer_save_LDFLAGS
    LIBS=$cuxfer_save_LIBS
    AC_MSG_RESULT([$have_cuda])
    AS_IF([test "$have_cuda" = yes], [
      CUDA_HOME_USED=$cuxfer_dir
      CUDA_CPPFLAGS="-isystem $cuxfer_dir/include"
      # -Xlinker -rpath=DIR, not -Wl,-rpath,DIR: the flags reach cuxfer.pc,
      # and nvcc knows -Xlinker but not -Wl (gcc, g++ and clang know both).
      # One -Xlinker, not two: pkg-config merges repeated ones.
      CUDA_LDFLAGS="-L$cuxfer_dir/$cuxfer_libdir -Xlinker -rpath=$cuxfer_dir/$cuxfer_libdir"
      CUDA_LIBS=-lcudart
      break 2])
  done
done
AS_CASE([$with_cuda:$have_cuda],
  [no:*], [],
  [check:no], [AC_MSG_WARN([no CUDA runtime found (tried: $cuxfer_cuda_dirs); only the header, pkg-config file and man pages will be installed])],
  [yes:no], [AC_MSG_ERROR([--with-cuda: no CUDA runtime (cuda_runtime_api.h and libcudart) in $cuxfer_cuda_dirs; pass --with-cuda=DIR])],
  [*:no], [AC_MSG_ERROR([--with-cuda=$with_cuda: no usable CUDA runtime there (need $with_cuda/include/cuda_runtime_api.h and libcudart in $with_cuda/lib64 or $with_cuda/lib); see config.log])])
AC_SUBST([CUDA_CPPFLAGS])
AC_SUBST([CUDA_LDFLAGS])
AC_SUBST([CUDA_LIBS])
AC_SUBST([CUDA_HOME_USED])
AM_CONDITIONAL([HAVE_CUDA], [test "$have_cuda" = yes])
AS_CASE([$with_cuda],
  [check], [cuxfer_distcheck_cuda=],
  [cuxfer_distcheck_cuda="--with-cuda=$with_cuda"])
])

# CUXFER_NVCC: nvcc, optional, for the tests that need a kernel.
# --with-nvcc=PATH names it; otherwise PATH, then the CUDA toolkit's bin.
AC_DEFUN([CUXFER_NVCC], [
AC_ARG_WITH([nvcc],
  [AS_HELP_STRING([--with-nvcc=PATH], [nvcc for the tests with kernels (default: search PATH and the CUDA toolkit)])],
  [], [with_nvcc=check])
NVCC=
AS_CASE([$have_cuda:$with_nvcc],
  [no:*|*:no], [],
  [*:check|*:yes], [AC_PATH_PROG([NVCC], [nvcc], [], [$PATH$PATH_SEPARATOR$CUDA_HOME_USED/bin])
    AS_IF([test "$with_nvcc:$NVCC" = yes:], [AC_MSG_ERROR([--with-nvcc: nvcc not found])])],
  [AS_IF([test -x "$with_nvcc"], [NVCC=$with_nvcc],
     [AC_MSG_ERROR([--with-nvcc=$with_nvcc: not an executable file])])])
AC_SUBST([NVCC])
AM_CONDITIONAL([HAVE_NVCC], [test -n "$NVCC"])
AS_CASE([$with_nvcc],
  [check|yes], [],
  [cuxfer_distcheck_cuda="$cuxfer_distcheck_cuda --with-nvcc=$with_nvcc"])
AC_SUBST([CUXFER_DISTCHECK_FLAGS], [$cuxfer_distcheck_cuda])
])

# AX_CUXFER_PTHREAD: -pthread for compiler and linker (gcc, clang, nvcc's host)
# in the build; PTHREAD_PC_LIBS, -lpthread, for cuxfer.pc, whose flags nvcc
# must accept too (it rejects -pthread).
AC_DEFUN([AX_CUXFER_PTHREAD], [
AC_MSG_CHECKING([whether $CC accepts -pthread])
cuxfer_save_CFLAGS=$CFLAGS
CFLAGS="$CFLAGS -pthread"
AC_LINK_IFELSE([AC_LANG_PROGRAM([[#include <pthread.h>]],
    [[pthread_mutex_t m = PTHREAD_MUTEX_INITIALIZER; return pthread_mutex_lock(&m);]])],
  [PTHREAD_CFLAGS=-pthread; PTHREAD_LIBS=-pthread; AC_MSG_RESULT([yes])],
  [PTHREAD_CFLAGS=; PTHREAD_LIBS=-lpthread; AC_MSG_RESULT([no, using -lpthread])])
CFLAGS=$cuxfer_save_CFLAGS
PTHREAD_PC_LIBS=-lpthread
AC_SUBST([PTHREAD_CFLAGS])
AC_SUBST([PTHREAD_LIBS])
AC_SUBST([PTHREAD_PC_LIBS])
])
