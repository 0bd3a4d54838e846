/* The OpenCL entry points the backend uses, reached through pointers that
 * ct_cl_load() fills from the ICD loader opened with dlopen, so that libctensor
 * does not need libOpenCL to load: without it the backend has no devices.
 *
 * Each clFoo used in src/opencl (and the OpenCL tests) is a macro for ct_cl.Foo,
 * so call sites keep the usual names. Using a new cl* function means adding it
 * to CT_CL_FUNCS and a #define below; cl_api.c checks each type against the
 * prototype in the CL headers at compile time. */
#ifndef CT_CL_API_H
#define CT_CL_API_H

#ifndef CL_TARGET_OPENCL_VERSION
#define CL_TARGET_OPENCL_VERSION 300
#endif
#ifndef CL_USE_DEPRECATED_OPENCL_1_2_APIS
#define CL_USE_DEPRECATED_OPENCL_1_2_APIS
#endif
#ifdef __APPLE__
#include <OpenCL/opencl.h>
#else
#include <CL/cl.h>
#endif

#include <stdbool.h>

/* X(return type, name without the "cl" prefix, parameter list) */
#define CT_CL_FUNCS(X)                                                                                              \
    X(cl_int, BuildProgram,                                                                                         \
      (cl_program program, cl_uint num_devices, const cl_device_id *device_list, const char *options,              \
       void(CL_CALLBACK * pfn_notify)(cl_program program, void *user_data), void *user_data))                     \
    X(cl_mem, CreateBuffer,                                                                                         \
      (cl_context context, cl_mem_flags flags, size_t size, void *host_ptr, cl_int *errcode_ret))                  \
    X(cl_command_queue, CreateCommandQueue,                                                                         \
      (cl_context context, cl_device_id device, cl_command_queue_properties properties, cl_int *errcode_ret))      \
    X(cl_context, CreateContext,                                                                                    \
      (const cl_context_properties *properties, cl_uint num_devices, const cl_device_id *devices,                  \
       void(CL_CALLBACK * pfn_notify)(const char *errinfo, const void *private_info, size_t cb, void *user_data), \
       void *user_data, cl_int *errcode_ret))                                                                       \
    X(cl_kernel, CreateKernel, (cl_program program, const char *kernel_name, cl_int *errcode_ret))                  \
    X(cl_program, CreateProgramWithBinary,                                                                          \
      (cl_context context, cl_uint num_devices, const cl_device_id *device_list, const size_t *lengths,            \
       const unsigned char **binaries, cl_int *binary_status, cl_int *errcode_ret))                                \
    X(cl_program, CreateProgramWithSource,                                                                          \
      (cl_context context, cl_uint count, const char **strings, const size_t *lengths, cl_int *errcode_ret))       \
    X(cl_int, EnqueueCopyBuffer,                                                                                    \
      (cl_command_queue command_queue, cl_mem src_buffer, cl_mem dst_buffer, size_t src_offset,                    \
       size_t dst_offset, size_t size, cl_uint num_events_in_wait_list, const cl_event *event_wait_list,           \
       cl_event *event))                                                                                            \
    X(cl_int, EnqueueFillBuffer,                                                                                    \
      (cl_command_queue command_queue, cl_mem buffer, const void *pattern, size_t pattern_size, size_t offset,     \
       size_t size, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event))            \
    X(cl_int, EnqueueNDRangeKernel,                                                                                 \
      (cl_command_queue command_queue, cl_kernel kernel, cl_uint work_dim, const size_t *global_work_offset,       \
       const size_t *global_work_size, const size_t *local_work_size, cl_uint num_events_in_wait_list,             \
       const cl_event *event_wait_list, cl_event *event))                                                           \
    X(cl_int, EnqueueReadBuffer,                                                                                    \
      (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_read, size_t offset, size_t size,           \
       void *ptr, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event))              \
    X(cl_int, EnqueueWriteBuffer,                                                                                   \
      (cl_command_queue command_queue, cl_mem buffer, cl_bool blocking_write, size_t offset, size_t size,          \
       const void *ptr, cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event))        \
    X(cl_int, Finish, (cl_command_queue command_queue))                                                             \
    X(cl_int, GetDeviceIDs,                                                                                         \
      (cl_platform_id platform, cl_device_type device_type, cl_uint num_entries, cl_device_id *devices,            \
       cl_uint *num_devices))                                                                                       \
    X(void *, GetExtensionFunctionAddressForPlatform, (cl_platform_id platform, const char *func_name))            \
    X(cl_int, GetDeviceInfo,                                                                                        \
      (cl_device_id device, cl_device_info param_name, size_t param_value_size, void *param_value,                 \
       size_t *param_value_size_ret))                                                                               \
    X(cl_int, GetEventProfilingInfo,                                                                                \
      (cl_event event, cl_profiling_info param_name, size_t param_value_size, void *param_value,                    \
       size_t *param_value_size_ret))                                                                               \
    X(cl_int, GetKernelInfo,                                                                                        \
      (cl_kernel kernel, cl_kernel_info param_name, size_t param_value_size, void *param_value,                    \
       size_t *param_value_size_ret))                                                                               \
    X(cl_int, GetKernelWorkGroupInfo,                                                                               \
      (cl_kernel kernel, cl_device_id device, cl_kernel_work_group_info param_name, size_t param_value_size,       \
       void *param_value, size_t *param_value_size_ret))                                                            \
    X(cl_int, GetPlatformIDs, (cl_uint num_entries, cl_platform_id *platforms, cl_uint *num_platforms))            \
    X(cl_int, GetPlatformInfo,                                                                                      \
      (cl_platform_id platform, cl_platform_info param_name, size_t param_value_size, void *param_value,           \
       size_t *param_value_size_ret))                                                                               \
    X(cl_int, GetProgramBuildInfo,                                                                                  \
      (cl_program program, cl_device_id device, cl_program_build_info param_name, size_t param_value_size,         \
       void *param_value, size_t *param_value_size_ret))                                                            \
    X(cl_int, GetProgramInfo,                                                                                       \
      (cl_program program, cl_program_info param_name, size_t param_value_size, void *param_value,                 \
       size_t *param_value_size_ret))                                                                               \
    X(cl_int, ReleaseCommandQueue, (cl_command_queue command_queue))                                                \
    X(cl_int, ReleaseContext, (cl_context context))                                                                 \
    X(cl_int, ReleaseEvent, (cl_event event))                                                                       \
    X(cl_int, ReleaseKernel, (cl_kernel kernel))                                                                    \
    X(cl_int, ReleaseMemObject, (cl_mem memobj))                                                                    \
    X(cl_int, ReleaseProgram, (cl_program program))                                                                 \
    X(cl_int, RetainProgram, (cl_program program))                                                                  \
    X(cl_int, SetKernelArg, (cl_kernel kernel, cl_uint arg_index, size_t arg_size, const void *arg_value))         \
    X(cl_int, WaitForEvents, (cl_uint num_events, const cl_event *event_list))

/* cl_khr_command_buffer, reached per platform through
 * clGetExtensionFunctionAddressForPlatform. The types are ours, not the headers'
 * (which differ between header releases in names, not in layout): the handle is
 * an opaque pointer and every properties list a cl_ulong list, which we never pass. */
#define CT_CL_DEVICE_COMMAND_BUFFER_REQUIRED_QUEUE_PROPERTIES 0x12AA /* cl_device_info, a queue-properties bitfield */
typedef struct ct_cl_cmdbuf_s *ct_cl_cmdbuf;
typedef cl_uint ct_cl_sync_point;
typedef struct ct_cl_cmdbuf_api {
    ct_cl_cmdbuf(CL_API_CALL *create)(cl_uint num_queues, const cl_command_queue *queues,
                                      const cl_ulong *properties, cl_int *errcode_ret);
    cl_int(CL_API_CALL *finalize)(ct_cl_cmdbuf command_buffer);
    cl_int(CL_API_CALL *release)(ct_cl_cmdbuf command_buffer);
    cl_int(CL_API_CALL *enqueue)(cl_uint num_queues, cl_command_queue *queues, ct_cl_cmdbuf command_buffer,
                                 cl_uint num_events_in_wait_list, const cl_event *event_wait_list, cl_event *event);
    cl_int(CL_API_CALL *ndrange)(ct_cl_cmdbuf command_buffer, cl_command_queue command_queue,
                                 const cl_ulong *properties, cl_kernel kernel, cl_uint work_dim,
                                 const size_t *global_work_offset, const size_t *global_work_size,
                                 const size_t *local_work_size, cl_uint num_sync_points_in_wait_list,
                                 const ct_cl_sync_point *sync_point_wait_list, ct_cl_sync_point *sync_point,
                                 void **mutable_handle);
} ct_cl_cmdbuf_api;

#define CT_CL_API_MEMBER(ret, name, params) ret(CL_API_CALL *name) params;
struct ct_cl_api {
    CT_CL_FUNCS(CT_CL_API_MEMBER)
};
#undef CT_CL_API_MEMBER

/* All NULL until ct_cl_load() succeeds; never changes after that. */
extern struct ct_cl_api ct_cl;

/* Opens the OpenCL library once per process (thread-safe): $CT_OPENCL_LIBRARY
 * if set, else the system's ICD loader. False when it is missing or lacks an
 * entry point (logged); then no cl* function may be called. */
bool ct_cl_load(void);

#ifndef CT_CL_API_NO_MACROS
#define clBuildProgram ct_cl.BuildProgram
#define clCreateBuffer ct_cl.CreateBuffer
#define clCreateCommandQueue ct_cl.CreateCommandQueue
#define clCreateContext ct_cl.CreateContext
#define clCreateKernel ct_cl.CreateKernel
#define clCreateProgramWithBinary ct_cl.CreateProgramWithBinary
#define clCreateProgramWithSource ct_cl.CreateProgramWithSource
#define clEnqueueCopyBuffer ct_cl.EnqueueCopyBuffer
#define clEnqueueFillBuffer ct_cl.EnqueueFillBuffer
#define clEnqueueNDRangeKernel ct_cl.EnqueueNDRangeKernel
#define clEnqueueReadBuffer ct_cl.EnqueueReadBuffer
#define clEnqueueWriteBuffer ct_cl.EnqueueWriteBuffer
#define clFinish ct_cl.Finish
#define clGetDeviceIDs ct_cl.GetDeviceIDs
#define clGetDeviceInfo ct_cl.GetDeviceInfo
#define clGetExtensionFunctionAddressForPlatform ct_cl.GetExtensionFunctionAddressForPlatform
#define clGetEventProfilingInfo ct_cl.GetEventProfilingInfo
#define clGetKernelInfo ct_cl.GetKernelInfo
#define clGetKernelWorkGroupInfo ct_cl.GetKernelWorkGroupInfo
#define clGetPlatformIDs ct_cl.GetPlatformIDs
#define clGetPlatformInfo ct_cl.GetPlatformInfo
#define clGetProgramBuildInfo ct_cl.GetProgramBuildInfo
#define clGetProgramInfo ct_cl.GetProgramInfo
#define clReleaseCommandQueue ct_cl.ReleaseCommandQueue
#define clReleaseContext ct_cl.ReleaseContext
#define clReleaseEvent ct_cl.ReleaseEvent
#define clReleaseKernel ct_cl.ReleaseKernel
#define clReleaseMemObject ct_cl.ReleaseMemObject
#define clReleaseProgram ct_cl.ReleaseProgram
#define clRetainProgram ct_cl.RetainProgram
#define clSetKernelArg ct_cl.SetKernelArg
#define clWaitForEvents ct_cl.WaitForEvents
#endif

#endif
