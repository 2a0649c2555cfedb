/*
 * cli_hdf5.c - what the subcommands ask HDF5 about objects: a type's name
 * and byte order, the float datasets of a file, where h5fz sits in a
 * pipeline, dimension scales, reclaiming variable-length buffers, and
 * closing what a command opened.
 */
#include "h5fz_cli.h"

#include <hdf5_hl.h>

#include <stdio.h>
#include <string.h>

const char *h5fz_cli_byte_order(hid_t type)
{
  H5T_class_t cls = type >= 0 ? H5Tget_class(type) : H5T_NO_CLASS;
  if (cls != H5T_FLOAT && cls != H5T_INTEGER) return NULL;
  switch (H5Tget_order(type)) {
  case H5T_ORDER_LE: return "little-endian";
  case H5T_ORDER_BE: return "big-endian";
  case H5T_ORDER_VAX: return "VAX-order";
  case H5T_ORDER_MIXED: return "mixed-endian";
  default: return NULL;
  }
}

const char *h5fz_cli_type_name(hid_t type, char *buf, size_t len)
{
  size_t size = type >= 0 ? H5Tget_size(type) : 0;
  const char *order = h5fz_cli_byte_order(type);
  /* Little-endian is what h5fz takes and what nearly every file holds: it
   * goes unsaid. Any other order is part of the name ("float32
   * big-endian"); one byte has no order. */
  const char *suffix = size > 1 && order && strcmp(order, "little-endian") ? order : NULL;
  if (len == 0) return buf;
  switch (type >= 0 ? H5Tget_class(type) : H5T_NO_CLASS) {
  case H5T_FLOAT: snprintf(buf, len, "float%zu%s%s", 8 * size, suffix ? " " : "", suffix ? suffix : ""); break;
  case H5T_INTEGER:
    snprintf(buf, len, "%sint%zu%s%s", H5Tget_sign(type) == H5T_SGN_NONE ? "u" : "", 8 * size, suffix ? " " : "",
             suffix ? suffix : "");
    break;
  case H5T_STRING: snprintf(buf, len, "string"); break;
  case H5T_COMPOUND: snprintf(buf, len, "compound (%zu bytes)", size); break;
  case H5T_ENUM: snprintf(buf, len, "enum (%zu bytes)", size); break;
  case H5T_ARRAY: snprintf(buf, len, "array (%zu bytes)", size); break;
  case H5T_BITFIELD: snprintf(buf, len, "bitfield (%zu bytes)", size); break;
  case H5T_OPAQUE: snprintf(buf, len, "opaque (%zu bytes)", size); break;
  case H5T_VLEN: snprintf(buf, len, "variable-length"); break;
  case H5T_REFERENCE: snprintf(buf, len, "reference"); break;
  default: snprintf(buf, len, "unknown type"); break;
  }
  return buf;
}

int h5fz_cli_is_float_type(hid_t type)
{
  size_t size = H5Tget_size(type);
  return H5Tget_class(type) == H5T_FLOAT && (size == 4 || size == 8);
}

static int is_float_dataset(hid_t obj)
{
  hid_t type;
  int yes;
  if (H5Iget_type(obj) != H5I_DATASET) return 0;
  type = H5Dget_type(obj);
  if (type < 0) return 0;
  yes = H5Tget_class(type) == H5T_FLOAT;
  H5Tclose(type);
  return yes;
}

typedef struct {
  h5fz_cli_names *list, *others;
  int failed;
} visit_state;

static herr_t visit_link(hid_t group, const char *name, const H5L_info_t *info, void *data)
{
  visit_state *st = data;
  hid_t obj;
  char path[4096];
  /* Soft and external links may dangle or leave the file; hard links reach
   * every object of the file. */
  if (info->type != H5L_TYPE_HARD) return 0;
  obj = H5Oopen(group, name, H5P_DEFAULT);
  if (obj < 0) return 0;
  h5fz_cli_names *to = is_float_dataset(obj) ? st->list : H5Iget_type(obj) == H5I_DATASET ? st->others : NULL;
  if (to) {
    snprintf(path, sizeof path, "/%s", name);
    if (h5fz_cli_names_add(to, path) < 0) {
      st->failed = 1;
      H5Oclose(obj);
      return -1;
    }
  }
  H5Oclose(obj);
  return 0;
}

int h5fz_cli_list_float_datasets(hid_t file, h5fz_cli_names *list, h5fz_cli_names *others)
{
  visit_state st = {list, others, 0};
  if (H5Lvisit(file, H5_INDEX_NAME, H5_ITER_INC, visit_link, &st) < 0 || st.failed) return -1;
  return 0;
}

int h5fz_cli_find_filter(hid_t dcpl, unsigned *flags, unsigned *cd, size_t cap, size_t *n_cd)
{
  int n = H5Pget_nfilters(dcpl);
  for (int i = 0; i < n; i++) {
    size_t n_words = cap;
    char name[64];
    unsigned config;
    H5Z_filter_t id = H5Pget_filter2(dcpl, (unsigned)i, flags, &n_words, cd, sizeof name, name, &config);
    if (id == H5FZ_FILTER_ID) {
      /* HDF5 reports the full count even when it exceeds cap (and fills
       * only cap words): so does *n_cd, for the caller to ask again. */
      *n_cd = n_words;
      return i;
    }
  }
  return -1;
}

int h5fz_cli_is_dimension_scale(hid_t dset)
{
  htri_t is;
  /* H5DSis_scale pushes an error for a dataset without a CLASS attribute
   * on some HDF5 versions: the answer is still "no" */
  H5E_BEGIN_TRY { is = H5DSis_scale(dset); }
  H5E_END_TRY;
  return is > 0;
}

void h5fz_cli_reclaim(hid_t mtype, hid_t space, void *buf)
{
#if H5_VERSION_GE(1, 12, 0)
  H5Treclaim(mtype, space, H5P_DEFAULT, buf);
#else
  H5Dvlen_reclaim(mtype, space, H5P_DEFAULT, buf);
#endif
}

void h5fz_cli_close_ids(hid_t *ids, size_t n)
{
  for (size_t i = 0; i < n; i++) {
    hid_t id = ids[i];
    if (id < 0) continue;
    switch (H5Iget_type(id)) {
    case H5I_FILE: H5Fclose(id); break;
    case H5I_GROUP: H5Gclose(id); break;
    case H5I_DATASET: H5Dclose(id); break;
    case H5I_ATTR: H5Aclose(id); break;
    case H5I_DATATYPE: H5Tclose(id); break;
    case H5I_DATASPACE: H5Sclose(id); break;
    case H5I_GENPROP_LST: H5Pclose(id); break;
    default: H5Idec_ref(id); break; /* any other kind: drop the reference the caller held */
    }
    ids[i] = -1;
  }
}
