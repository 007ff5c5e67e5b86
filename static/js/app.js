// gpu-sizer progressive enhancement
