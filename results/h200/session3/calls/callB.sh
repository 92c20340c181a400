set -u
export GIT_COMMIT=f12cd09926be
mkdir -p $OUT/b; cd 06_tensor_core_wmma
t0=$(date +%s)
make -j16 all > $OUT/b/build.log 2>&1; echo "build $? $(( $(date +%s)-t0 ))s"
timeout 200 ./test_06_tensor_core_wmma "[06]" > $OUT/b/test06.log 2>&1; echo "test $?"; grep -E "test cases" $OUT/b/test06.log | tail -1
timeout 150 ./06_tensor_core_wmma --tune --sizes 4096,8192,1000x1013x4097 --csv $OUT/b/tune.csv > $OUT/b/tune.log 2>&1; echo "tune $?"
grep -E "^(m_|t_|h_128x128_w64x64_s3 |cublas)" $OUT/b/tune.log | grep -v "^t_64\|^t_128x128_w64x32\|^t_256" | awk '{print $1,$3,$4,$7}' | grep -v "^[a-z_0-9]* [0-9]* [0-9]* [0-9]*$"
cuobjdump -sass -arch sm_90 ./06_tensor_core_wmma > /tmp/sass.txt 2>/dev/null
for p in 'Tf32MmaInputsLi128ELi128ELi16ELi64ELi64ELi3ELi4ELi8EELb1' 'Tf32MmaInputsLi128ELi256ELi32ELi64ELi64ELi3ELi4ELi8EELb1' 'Tf32InputsLi128ELi128ELi32ELi64ELi64ELi3ELi4ELi8EEL8Mainloop1EL8Epilogue1ELb1' 'Fp16InputsLi128ELi128ELi32ELi64ELi64ELi3ELi8ELi8EEL8Mainloop1EL8Epilogue1ELb1'; do python3 ../tools/sass_loop.py "$p" --listing < /tmp/sass.txt > $OUT/b/sass_$p.txt; sed -n 2,4p $OUT/b/sass_$p.txt | cut -c1-220; done
