#!/usr/bin/env bash
# Open3D's Linux wheel links against libusb-1.0 and libgomp; gmsh's (Open CASCADE, for STEP)
# against GLU and a few X11 libraries even when no window is opened; MuJoCo's offscreen
# renderer without a display (the image strip of `policy eval --report`) needs EGL with Mesa's
# software driver. Install them with apt-get when running as root; otherwise say exactly what
# is missing and stop.
set -euo pipefail
missing=()
ldconfig -p 2>/dev/null | grep -q 'libusb-1.0.so.0' || missing+=(libusb-1.0-0)
ldconfig -p 2>/dev/null | grep -q 'libgomp.so.1' || missing+=(libgomp1)
ldconfig -p 2>/dev/null | grep -q 'libGLU.so.1' || missing+=(libglu1-mesa)
ldconfig -p 2>/dev/null | grep -q 'libXcursor.so.1' || missing+=(libxcursor1)
ldconfig -p 2>/dev/null | grep -q 'libXft.so.2' || missing+=(libxft2)
ldconfig -p 2>/dev/null | grep -q 'libXinerama.so.1' || missing+=(libxinerama1)
ldconfig -p 2>/dev/null | grep -q 'libEGL.so.1' || missing+=(libegl1)
ldconfig -p 2>/dev/null | grep -q 'libEGL_mesa.so.0' || missing+=(libegl-mesa0)
compgen -G '/usr/lib/*/dri/swrast_dri.so' >/dev/null || missing+=(libgl1-mesa-dri)
[ ${#missing[@]} -eq 0 ] && exit 0
if [ "$(id -u)" -eq 0 ] && command -v apt-get >/dev/null 2>&1; then
    echo "installing system libraries for Open3D, gmsh and MuJoCo's renderer: ${missing[*]}"
    apt-get update -qq
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq "${missing[@]}" >/dev/null
else
    echo "error: Open3D, gmsh and MuJoCo's renderer need the system libraries: ${missing[*]}" >&2
    echo "       install them, e.g. 'sudo apt-get install ${missing[*]}', then run make again" >&2
    exit 1
fi
