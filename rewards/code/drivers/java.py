"""The Java driver: a class placed (on one line) after the solution's imports (so it is the file's first class with a
``main``, the one ``java`` starts) that calls ``Solution.FN`` (static or on a new instance; else ``Main.FN``)
with the JSON arguments on stdin, converted to the method's parameter types by reflection, and prints
the returned value as JSON on the last line of stdout."""

from __future__ import annotations

import re

__all__ = ["java_program"]

_IMPORTS = re.compile(r"\A(?:\s|//[^\n]*\n|/\*.*?\*/|(?:import|package)\s[^;]*;)*", re.S)

DRIVER = r"""
final class RewardhubDriver {
    static final char OPEN = (char) 123, CLOSE = (char) 125;
    public static void main(String[] unused) throws Throwable {
        java.io.ByteArrayOutputStream buffer = new java.io.ByteArrayOutputStream();
        System.in.transferTo(buffer);
        java.io.PrintStream out = new java.io.PrintStream(new java.io.FileOutputStream(java.io.FileDescriptor.out), true, "UTF-8");
        Object parsed = new Parser(buffer.toString("UTF-8")).value();
        java.util.List<?> args = (java.util.List<?>) parsed;
        java.lang.reflect.Method method = null;
        Class<?> owner = null;
        for (String name : new String[] {"Solution", "Main"}) {
            try { owner = Class.forName(name); } catch (ClassNotFoundException e) { continue; }
            for (java.lang.reflect.Method m : owner.getDeclaredMethods())
                if (m.getName().equals(__NAME__) && m.getParameterCount() == args.size()) method = m;
            if (method != null) break;
        }
        if (method == null) throw new NoSuchMethodException(__NAME__ + " with " + args.size() + " parameters in class Solution");
        method.setAccessible(true);
        java.lang.reflect.Type[] types = method.getGenericParameterTypes();
        Object[] values = new Object[types.length];
        for (int i = 0; i < types.length; i++) values[i] = convert(args.get(i), types[i]);
        Object target = null;
        if (!java.lang.reflect.Modifier.isStatic(method.getModifiers())) {
            java.lang.reflect.Constructor<?> make = owner.getDeclaredConstructor();
            make.setAccessible(true);
            target = make.newInstance();
        }
        Object result;
        try { result = method.invoke(target, values); }
        catch (java.lang.reflect.InvocationTargetException e) { throw e.getCause(); }
        StringBuilder text = new StringBuilder("\n");
        write(result, text);
        out.println(text);
        out.flush();
        System.exit(0);
    }

    static Object convert(Object v, java.lang.reflect.Type type) {
        if (type instanceof java.lang.reflect.ParameterizedType) {
            java.lang.reflect.ParameterizedType p = (java.lang.reflect.ParameterizedType) type;
            Class<?> raw = (Class<?>) p.getRawType();
            if (java.util.Collection.class.isAssignableFrom(raw)) {
                java.util.Collection<Object> list = java.util.Set.class.isAssignableFrom(raw) ? new java.util.LinkedHashSet<>() : new java.util.ArrayList<>();
                for (Object item : (java.util.List<?>) v) list.add(convert(item, p.getActualTypeArguments()[0]));
                return list;
            }
            if (java.util.Map.class.isAssignableFrom(raw)) {
                java.util.Map<Object, Object> map = new java.util.LinkedHashMap<>();
                for (java.util.Map.Entry<?, ?> e : ((java.util.Map<?, ?>) v).entrySet())
                    map.put(convert(e.getKey(), p.getActualTypeArguments()[0]), convert(e.getValue(), p.getActualTypeArguments()[1]));
                return map;
            }
            return convert(v, raw);
        }
        Class<?> c = (Class<?>) type;
        if (v == null) return null;
        if (c.isArray()) {
            java.util.List<?> items = (java.util.List<?>) v;
            Object array = java.lang.reflect.Array.newInstance(c.getComponentType(), items.size());
            for (int i = 0; i < items.size(); i++) java.lang.reflect.Array.set(array, i, convert(items.get(i), c.getComponentType()));
            return array;
        }
        if (c == int.class || c == Integer.class) return ((Number) v).intValue();
        if (c == long.class || c == Long.class) return ((Number) v).longValue();
        if (c == double.class || c == Double.class) return ((Number) v).doubleValue();
        if (c == float.class || c == Float.class) return ((Number) v).floatValue();
        if (c == short.class || c == Short.class) return ((Number) v).shortValue();
        if (c == byte.class || c == Byte.class) return ((Number) v).byteValue();
        if (c == char.class || c == Character.class) return ((String) v).charAt(0);
        if (c == java.math.BigInteger.class) return new java.math.BigInteger(v.toString());
        if (c == java.util.List.class || c == java.util.Collection.class) return new java.util.ArrayList<>((java.util.List<?>) v);
        return v;
    }

    static void write(Object v, StringBuilder out) {
        if (v == null) out.append("null");
        else if (v instanceof Boolean || v instanceof Integer || v instanceof Long || v instanceof Short
                 || v instanceof Byte || v instanceof java.math.BigInteger) out.append(v);
        else if (v instanceof Double || v instanceof Float) {
            double d = ((Number) v).doubleValue();
            out.append(Double.isFinite(d) ? Double.toString(d) : "null");
        } else if (v instanceof Character || v instanceof CharSequence) {
            out.append('"');
            for (char ch : v.toString().toCharArray()) {
                if (ch == '"' || ch == '\\') out.append('\\').append(ch);
                else if (ch < 0x20) out.append(String.format("\\u%04x", (int) ch));
                else out.append(ch);
            }
            out.append('"');
        } else if (v.getClass().isArray()) {
            out.append('[');
            for (int i = 0; i < java.lang.reflect.Array.getLength(v); i++) {
                if (i > 0) out.append(',');
                write(java.lang.reflect.Array.get(v, i), out);
            }
            out.append(']');
        } else if (v instanceof Iterable) {
            out.append('[');
            boolean first = true;
            for (Object item : (Iterable<?>) v) { if (!first) out.append(','); first = false; write(item, out); }
            out.append(']');
        } else if (v instanceof java.util.Map) {
            out.append(OPEN);
            boolean first = true;
            for (java.util.Map.Entry<?, ?> e : ((java.util.Map<?, ?>) v).entrySet()) {
                if (!first) out.append(',');
                first = false;
                write(String.valueOf(e.getKey()), out);
                out.append(':');
                write(e.getValue(), out);
            }
            out.append(CLOSE);
        } else throw new IllegalArgumentException("not plain data: " + v.getClass().getName());
    }

    static final class Parser {
        final String s; int i = 0;
        Parser(String s) { this.s = s; }
        void skip() { while (i < s.length() && Character.isWhitespace(s.charAt(i))) i++; }
        Object value() {
            skip();
            char c = s.charAt(i);
            if (c == '[') {
                java.util.List<Object> list = new java.util.ArrayList<>();
                i++; skip();
                if (s.charAt(i) == ']') { i++; return list; }
                while (true) { list.add(value()); skip(); if (s.charAt(i++) == ']') return list; }
            }
            if (c == OPEN) {
                java.util.Map<Object, Object> map = new java.util.LinkedHashMap<>();
                i++; skip();
                if (s.charAt(i) == CLOSE) { i++; return map; }
                while (true) {
                    Object key = value(); skip(); i++;
                    map.put(key, value()); skip();
                    if (s.charAt(i++) == CLOSE) return map;
                }
            }
            if (c == '"') {
                StringBuilder b = new StringBuilder();
                i++;
                while (s.charAt(i) != '"') {
                    char ch = s.charAt(i++);
                    if (ch == '\\') {
                        char e = s.charAt(i++);
                        if (e == 'u') { b.append((char) Integer.parseInt(s.substring(i, i + 4), 16)); i += 4; }
                        else b.append(e == 'n' ? '\n' : e == 't' ? '\t' : e == 'r' ? '\r' : e == 'b' ? '\b' : e == 'f' ? '\f' : e);
                    } else b.append(ch);
                }
                i++;
                return b.toString();
            }
            if (s.startsWith("true", i)) { i += 4; return Boolean.TRUE; }
            if (s.startsWith("false", i)) { i += 5; return Boolean.FALSE; }
            if (s.startsWith("null", i)) { i += 4; return null; }
            int start = i;
            while (i < s.length() && "+-0123456789.eE".indexOf(s.charAt(i)) >= 0) i++;
            String number = s.substring(start, i);
            if (number.matches("-?\\d+")) {
                java.math.BigInteger big = new java.math.BigInteger(number);
                return big.bitLength() < 64 ? (Object) big.longValue() : big;
            }
            return Double.parseDouble(number);
        }
    }
}
"""


def java_program(code: str, fn_name: str) -> str:
    """The solution with the driver class after its imports. The driver has no ``//`` comment (it is put on one
    line) and no brace in a literal (``OPEN``, ``CLOSE``): the file's braces stay balanced for the sandbox,
    which finds the public class and the class to start by them."""
    head = _IMPORTS.match(code).end()
    driver = " ".join(line.strip() for line in DRIVER.replace("__NAME__", '"' + fn_name + '"').splitlines())
    return code[:head] + driver + code[head:]  # on one line: javac's line numbers stay the solution's
