# Installs the build into a scratch prefix, then runs the installed ct-ops with no
# environment help (its RPATH, from that prefix and from a moved copy of it), and
# builds and runs a consumer through find_package(ctensor) (shared and static, and
# one with the backend-author header) and through pkg-config.
set(prefix ${WORK_DIR}/prefix)
file(REMOVE_RECURSE ${WORK_DIR})

function(run)
  execute_process(COMMAND ${ARGN} RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0)
    message(FATAL_ERROR "failed (${rc}): ${ARGN}\n${out}\n${err}")
  endif()
  message(STATUS "${out}")
endfunction()

run(${CMAKE_COMMAND} --install ${BUILD_DIR} --prefix ${prefix})
foreach(f include/ctensor.h include/ctensor-backend-impl.h lib/libctensor.a lib/cmake/ctensor/ctensorConfig.cmake lib/pkgconfig/ctensor.pc bin/ct-ops)
  if(NOT EXISTS ${prefix}/${f})
    message(FATAL_ERROR "not installed: ${f}")
  endif()
endforeach()

# ct-ops starts from the prefix and from a moved copy, without LD_LIBRARY_PATH,
# and loads the prefix's libctensor, not the build tree's.
unset(ENV{LD_LIBRARY_PATH})
file(COPY ${prefix}/ DESTINATION ${WORK_DIR}/moved)
foreach(p ${prefix} ${WORK_DIR}/moved)
  execute_process(COMMAND ${p}/bin/ct-ops devices RESULT_VARIABLE rc OUTPUT_VARIABLE out ERROR_VARIABLE err)
  if(NOT rc EQUAL 0 OR NOT out MATCHES "device 0: CPU")
    message(FATAL_ERROR "the installed ${p}/bin/ct-ops devices failed (${rc}) without LD_LIBRARY_PATH:\n${out}\n${err}")
  endif()
  find_program(LDD ldd)
  if(LDD)
    execute_process(COMMAND ${LDD} ${p}/bin/ct-ops OUTPUT_VARIABLE out)
    string(REGEX MATCH "libctensor[^\n]*" line "${out}")
    string(FIND "${line}" "=> ${p}/" pos)
    if(pos EQUAL -1)
      message(FATAL_ERROR "${p}/bin/ct-ops does not load the libctensor next to it: ${line}")
    endif()
    message(STATUS "${p}/bin/ct-ops: ${line}")
  endif()
endforeach()

run(${CMAKE_COMMAND} -S ${SOURCE_DIR}/tests/install/consumer -B ${WORK_DIR}/consumer
    -DCMAKE_PREFIX_PATH=${prefix} -DCMAKE_C_COMPILER=${C_COMPILER})
run(${CMAKE_COMMAND} --build ${WORK_DIR}/consumer)
set(ENV{LD_LIBRARY_PATH} ${prefix}/lib)
run(${WORK_DIR}/consumer/consumer_shared)
run(${WORK_DIR}/consumer/consumer_static)
run(${WORK_DIR}/consumer/consumer_impl)

find_program(PKG_CONFIG pkg-config)
if(NOT PKG_CONFIG)
  message(FATAL_ERROR "pkg-config is not installed")
endif()
set(ENV{PKG_CONFIG_PATH} ${prefix}/lib/pkgconfig)
execute_process(COMMAND ${PKG_CONFIG} --cflags --libs ctensor OUTPUT_VARIABLE flags RESULT_VARIABLE rc
                OUTPUT_STRIP_TRAILING_WHITESPACE)
if(NOT rc EQUAL 0)
  message(FATAL_ERROR "pkg-config does not know ctensor")
endif()
separate_arguments(flags UNIX_COMMAND "${flags}")
run(${C_COMPILER} ${SOURCE_DIR}/tests/install/consumer/consumer.c ${flags} -o ${WORK_DIR}/consumer_pc)
run(${WORK_DIR}/consumer_pc)
