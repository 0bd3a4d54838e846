/* Shared by the generic backend wrappers (src/backend/): how tensors are named in
 * messages, and the checks every transfer shares. */
#ifndef CT_BACKEND_INTERNAL_H
#define CT_BACKEND_INTERNAL_H

#include "ctensor-backend-impl.h"
#include "core/internal.h"

/* The name for messages; unnamed tensors get "(unnamed)". */
static inline const char *ct_backend_tensor_name(const ct_tensor *t) {
    return t->name[0] ? t->name : "(unnamed)";
}

/* The checks every transfer shares (buffer.c), fn naming the public function.
 * Returns CT_OK with *buf set, or a status; *buf stays NULL for a zero-size
 * transfer, which does nothing. */
ct_status ct_check_transfer(const char *fn, const ct_tensor *t, bool have_data, size_t offset, size_t size,
                            ct_buffer **buf);

/* The buffer type's name for messages, never NULL. */
const char *ct_buft_label(const ct_buffer_type *buft);

#endif
