set -u
export GIT_COMMIT=b229365ed492
mkdir -p $OUT/d; cd 06_tensor_core_wmma
t0=$(date +%s)
make -j16 all > $OUT/d/build.log 2>&1; echo "build $? $(( $(date +%s)-t0 ))s"
timeout 200 ./test_06_tensor_core_wmma "[06]" > $OUT/d/test06.log 2>&1; echo "test $?"; grep -E "test cases" $OUT/d/test06.log | tail -1; grep -B2 -A10 FAILED $OUT/d/test06.log | head -30
for r in 1 2; do timeout 120 ./06_tensor_core_wmma --tune --sizes 4096,8192,1000x1013x4097,2048 --csv $OUT/d/tune.csv > $OUT/d/tune$r.log 2>&1; echo "tune $?"; done
paste <(grep -E "^(m_|t_|cublas_tf32)" $OUT/d/tune1.log | grep -v "^t_128x128_w64x32\|^t_256\|^t_128x256_w64x64_s3\|^t_128x128_w64x64_s3 " | awk '{print $1,$3,$7}') <(grep -E "^(m_|t_|cublas_tf32)" $OUT/d/tune2.log | grep -v "^t_128x128_w64x32\|^t_256\|^t_128x256_w64x64_s3\|^t_128x128_w64x64_s3 " | awk '{print $7}') | grep -v "^[a-z_0-9]* [0-9]* [0-9]*	"
grep -A12 "^fastest" $OUT/d/tune1.log
cuobjdump -sass -arch sm_90 ./06_tensor_core_wmma > /tmp/sass.txt 2>/dev/null
for p in 'Tf32MmaInputsLi128ELi128ELi32ELi64ELi64ELi3ELi4ELi8EELb1' 'Tf32InputsLi128ELi128ELi32ELi64ELi64ELi3ELi4ELi8EEL8Mainloop1EL8Epilogue1ELb1'; do python3 ../tools/sass_loop.py "$p" --listing < /tmp/sass.txt > $OUT/d/sass_$p.txt; sed -n 2,4p $OUT/d/sass_$p.txt | cut -c1-220; done
