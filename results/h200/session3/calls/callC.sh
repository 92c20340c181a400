set -u
export GIT_COMMIT=d671811345b7
mkdir -p $OUT/c; cd 06_tensor_core_wmma
t0=$(date +%s)
make -j16 06_tensor_core_wmma > $OUT/c/build.log 2>&1; echo "build $? $(( $(date +%s)-t0 ))s"
for r in 1 2; do timeout 100 ./06_tensor_core_wmma --tune --sizes 4096,8192 --csv $OUT/c/tune.csv > $OUT/c/tune$r.log 2>&1; echo "tune $?"; done
paste <(grep -E "^(m_|t_128x128_w64x64_k32_s3 |cublas_tf32)" $OUT/c/tune1.log | awk '{print $1,$3,$7}') <(grep -E "^(m_|t_128x128_w64x64_k32_s3 |cublas_tf32)" $OUT/c/tune2.log | awk '{print $7}')
cuobjdump -sass -arch sm_90 ./06_tensor_core_wmma > /tmp/sass.txt 2>/dev/null
for p in 'Tf32MmaTiesEvenLi128ELi256ELi32ELi64ELi64ELi3ELi4ELi8EELb1'; do python3 ../tools/sass_loop.py "$p" --listing < /tmp/sass.txt > $OUT/c/sass_$p.txt; sed -n 2,4p $OUT/c/sass_$p.txt | cut -c1-220; done
